/* Compiled once per C ABI header, with that header force-included first
 * (-include): the header must stand alone and be strict C11. What fails is
 * the compilation; running only confirms the header's version macro. */
#include <stdio.h>

int main(void) {
#ifdef MODRT_PLUGIN_ABI_MAJOR
  printf("plugin ABI %d.%d\n", MODRT_PLUGIN_ABI_MAJOR, MODRT_PLUGIN_ABI_MINOR);
#endif
  return 0;
}
