"""What modrt.compile and its source checks (_validate) both raise: the
errors and warnings of compiling. A module of its own so that neither imports
the other back. The source language messages name is the backend record's
(`_registry.language_of`)."""

from __future__ import annotations

from ._registry import language_of

# Names for annotations only: `typing` costs milliseconds at `import modrt`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


class CompileError(ValueError):
    """Kernel source that does not compile, found by `modrt.compile`.

    `target` is the target kind, `functions` the function names the source
    defines, `filename` the name the messages use, `tool` the checker, and
    `messages` the checker's diagnostics (file:line:column: error: ...),
    `language` the source's language where the target takes several (WGSL
    or GLSL for vulkan, PTX or CUDA C++ for cuda; default: the target's own)."""

    def __init__(
        self,
        target: str,
        functions: Sequence[str],
        filename: str,
        tool: str,
        messages: str,
        language: str | None = None,
    ) -> None:
        self.target = target
        self.language = language or language_of(target)
        self.functions = list(functions)
        self.filename = filename
        self.tool = tool
        self.messages = messages.strip()
        names = ", ".join(self.functions)
        super().__init__(
            f"{self.language} of {names} ({filename}) does not compile "
            f"[{tool}]; nothing was built or exported:\n{self.messages}"
        )


class SignatureError(ValueError):
    """A signature given to `modrt.compile` that disagrees with the kernel's
    own declarations (read by the target's reflector). `given` and `kernel`
    are both signatures as text; `reason` says what differs first."""

    def __init__(self, target: str, given: str, kernel: str, reason: str) -> None:
        self.target = target
        self.given = given
        self.kernel = kernel
        self.reason = reason
        super().__init__(
            f"the signature does not match the {language_of(target)} kernel: {reason}\n"
            f"  given:  {given}\n  kernel: {kernel}"
        )


class SourceNotCheckedWarning(RuntimeWarning):
    """`modrt.compile` could not check this source here (the reason is the message)."""


class CompileWarning(UserWarning):
    """Kernel source that compiles, with the checker's warnings (the message
    names the functions and file and holds the warnings in full)."""
