// The one byte serializer (ByteWriter, ByteReader) behind every saved
// payload, signature and artifact: little-endian integers, length-prefixed
// strings, and reads that fail with the field and offset when bytes run out.
#include "modrt/core/payload.h"

namespace modrt {

void ByteWriter::U16(uint16_t v) {
  U8(v & 0xff);
  U8(v >> 8);
}

void ByteWriter::U64(uint64_t v) {
  for (int i = 0; i < 8; ++i) U8(static_cast<uint8_t>(v >> (8 * i)));
}

void ByteWriter::Str(std::string_view s) {
  U64(s.size());
  out_.append(s.data(), s.size());
}

void ByteReader::Corrupt(const std::string& why) const {
  Fail("ValueError", "corrupted ", what_, " at byte ", pos_, ": ", why);
}

void ByteReader::Need(uint64_t n, const char* field) const {
  if (n > data_.size() - pos_) {
    Fail("ValueError", "truncated ", what_, ": ", field, " needs ", n, " bytes at byte ", pos_,
         ", only ", data_.size() - pos_, " left");
  }
}

uint8_t ByteReader::U8() {
  Need(1, "a byte");
  return static_cast<uint8_t>(data_[pos_++]);
}

uint16_t ByteReader::U16() {
  Need(2, "a u16");
  uint16_t lo = U8();
  return lo | static_cast<uint16_t>(U8() << 8);
}

uint64_t ByteReader::U64() {
  Need(8, "a u64");
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(U8()) << (8 * i);
  return v;
}

std::string ByteReader::Str(const char* field) {
  Need(8, field);
  uint64_t n = U64();
  Need(n, field);
  std::string s(data_.substr(pos_, n));
  pos_ += n;
  return s;
}

uint64_t ByteReader::Count(const char* field, uint64_t min_item_bytes) {
  Need(8, field);
  uint64_t n = U64();
  if (min_item_bytes > 0 && n > (data_.size() - pos_) / min_item_bytes) {
    Fail("ValueError", "truncated ", what_, ": ", field, " claims ", n, " items at byte ", pos_,
         ", only ", data_.size() - pos_, " bytes left");
  }
  return n;
}

void ByteReader::ExpectEnd() const {
  if (pos_ != data_.size()) {
    Fail("ValueError", "corrupted ", what_, ": ", data_.size() - pos_,
         " unexpected trailing bytes at byte ", pos_);
  }
}

}  // namespace modrt
