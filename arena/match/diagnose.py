"""Why a bot process failed, in words its author can act on.

:mod:`arena.match.process` hands over what it saw (the first and last bytes of the
bot's stderr, the line it wrote instead of ``ready``, its limits) and gets
back the cause where one can be recognised: the interpreter or a file it
opened is not visible inside the sandbox (bubblewrap's ``execvp``, a missing
shared library, the JVM's ``Error loading java.security file``), a Python
traceback (its exception and the bot's own file and line), a Java exception
(the ``Caused by`` line and the bot's source line), the process limit (a
JVM's ``pthread_create failed``), the JVM writing its warnings on stdout.

Everything returned may quote the bot's text: it is made terminal-safe here
(:func:`arena.untrusted.printable`), and each line is cut short.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from arena.untrusted import printable

__all__ = ["causes", "excerpt", "process_limit", "stdout_hints"]

_WIDTH = 200
_PY_FRAME = re.compile(r'^[ \t]*File "(?P<path>[^"]+)", line (?P<line>\d+)')
_PY_SYNTAX = re.compile(
    r'^[ \t]*File "[^"\n]+", line \d+\n(?:.*\n){0,3}?(?:SyntaxError|IndentationError|TabError): ', re.M
)
_JAVA_FRAME = re.compile(r"^[ \t]*at (?P<where>[\w$.<>/]+)\((?P<file>[\w$.-]+\.(java|kt|scala)):(?P<line>\d+)\)", re.M)
_JAVA_CAUSE = re.compile(r"^Caused by: (.*)$", re.M)
_JAVA_THREAD = re.compile(r'^(Exception in thread ".*)$', re.M)
_STARTER = re.compile(
    r"(?:bwrap: execvp|prlimit: failed to execute) ([^\n:]{1,512}?): (No such file or directory|"
    r"Permission denied)"
)
_FRAMES_CHECKED = 64  # the last frames of a traceback looked up as the bot's own (each costs a realpath)


def _safe(text: str, width: int = _WIDTH) -> str:
    text = text.strip()
    return printable(text if len(text) <= width else text[:width] + "...", newlines=False)


def excerpt(head: str, tail: str, complete: bool, keep: int = 3) -> str:
    """The first and the last ``keep`` lines of a bot's stderr, as one line
    (``complete``: ``tail`` holds all of it, else ``head`` is its start)."""
    first = [line for line in (tail if complete else head).splitlines() if line.strip()]
    last = [line for line in tail.splitlines() if line.strip()]
    if complete and len(first) <= 2 * keep:
        shown = first
    else:
        skipped = len(first) - 2 * keep if complete else None
        gap = f"... ({skipped} more lines) ..." if skipped else "..."
        shown = first[:keep] + [gap] + last[-keep:]
    return " | ".join(line if line.startswith("...") and line.endswith("...") else _safe(line) for line in shown)


def causes(
    text: str,
    *,
    own: Callable[[str], bool],
    program: str,
    processes: int,
    max_processes: int,
    memory_mb: int,
    pids_capped: bool,
) -> list[str]:
    """What ``text`` (a bot's stderr: its start and its end) says went wrong,
    most specific first; ``own(path)`` tells the bot's own files."""
    out: list[str] = []
    # The program is started by bwrap, or (inside it) by the quota launcher prlimit.
    m = _STARTER.search(text)
    if m:
        what = "not visible inside the sandbox" if m.group(2).startswith("No such") else "not executable"
        out.append(
            f"the program {_safe(m.group(1))} is {what} (for a script, check its #! line; "
            f"docs/protocol.md says which runtimes the sandbox shows)"
        )
    m = re.search(r"/usr/bin/env: .(\S+?).: No such file or directory", text)
    if m:
        out.append(
            f"the interpreter {_safe(m.group(1))} that its #!/usr/bin/env line names is not on the "
            f"sandbox's PATH (/usr/local/bin:/usr/bin:/bin): name it by its absolute path in the #! "
            f"line, or in the manifest's command"
        )
    m = re.search(r"error while loading shared libraries: (\S+?):", text)
    if m:
        out.append(
            f"the library {_safe(m.group(1))} is not visible inside the sandbox: only the libraries its "
            f"runtime and its own programs need and the bot's own files are (put it in the bot's own "
            f"folder, or list its system path in the manifest's view: docs/sandbox.md, 'The file view')"
        )
    if program:  # a manifest bot: what its file view lacks (arena/sandbox/programview.py)
        out += _view_misses(text)
    if "Error loading java.security file" in text:
        out.append(
            "the JVM could not read its configuration (conf/security/java.security, on Debian a link "
            "into /etc/java-NN-openjdk): that file is not visible inside the sandbox"
        )
    if (
        re.search(
            r"pthread_create failed|unable to create native thread|Cannot create worker GC thread|"
            r"can't start new thread",
            text,
        )
        or pids_capped
    ):
        out.append(process_limit(processes, max_processes))
    if re.search(r"insufficient memory for the Java Runtime|Could not reserve enough space", text):
        out.append(
            f"the JVM could not get its memory within {memory_mb} MB: give it -Xmx (below that) or ask "
            f"for more (limits: {{memory_mb: ...}})"
        )
    out += _python(text, own)
    out += _java(text)
    m = re.search(r"Error: Cannot find module '([^']+)'", text)
    if m:
        out.append(
            f"Node cannot find the module {_safe(m.group(1))}: only the bot's own files are visible "
            f"(keep node_modules in the bot's own folder)"
        )
    return list(dict.fromkeys(out))


_MISSING_COMMAND = re.compile(r"^[^\n]{0,200}?: (?:line \d+: |\d+: )?([\w.+-]{1,100}): (?:command )?not found$", re.M)
_MISSING_PATH = re.compile(
    r"((?:/usr|/bin|/sbin|/lib|/lib64|/etc)/[\w./+-]{1,400})'?: (?:cannot open shared object file: )?"
    r"No such file or directory|No such file or directory: '((?:/usr|/bin|/sbin|/lib|/lib64|/etc)/[^'\n]{1,400})'"
)


def _view_misses(text: str) -> list[str]:
    """A command a script ran, or a system file the program opened, that the
    program bot's file view lacks (it holds the runtime's closure only)."""
    out = []
    what = None
    m = _MISSING_COMMAND.search(text)
    if m:
        what = f"the command {_safe(m.group(1))}"
        example = f"/usr/bin/{_safe(m.group(1))}"
    else:
        m = _MISSING_PATH.search(text)
        if m:
            path = m.group(1) or m.group(2)
            what, example = f"the file {_safe(path)}", _safe(path)
    if what is not None:
        out.append(
            f"{what} is not in the bot's file view: a program bot sees only what its runtime needs of the "
            f"system (docs/sandbox.md, 'The file view'); list what else it needs in its manifest, "
            f"e.g. view: [{example}]"
        )
    return out


def process_limit(processes: int, max_processes: int) -> str:
    """The process limit was hit: what it is, and how a bot asks for more."""
    return (
        f"it hit the process limit: {processes} processes+threads (sandbox limit processes); a bot may ask "
        f"for more in its manifest (limits: {{processes: 64}}; LIMITS = {{'processes': 64}} in a Python "
        f"bot), up to the run's sandbox.max_processes ({max_processes})"
    )


def _python(text: str, own: Callable[[str], bool]) -> list[str]:
    """A Python traceback: its exception line and the last frame in the bot's own files."""
    at = text.rfind("Traceback (most recent call last):")
    host = re.search(r"^arena\.host: (.+)$", text, re.M)
    if at < 0:
        # A SyntaxError from the bot host has no frame of the bot's: only its file, line and caret.
        # [ \t]*, not \s*: \s also eats newlines, and from every line start of a
        # stderr of bare newlines it then scanned all the rest (quadratic: 0.9 s
        # of the referee's CPU for 20 KiB, docs/sandbox.md).
        syntax = _PY_SYNTAX.search(text)
        if syntax is None:
            return [f"the bot host says: {_safe(host.group(1))}"] if host else []
        at = syntax.start()
    block = text[at:].splitlines()[1:] if text.startswith("Traceback", at) else text[at:].splitlines()
    exc = next(
        (
            line
            for line in block
            if line
            and not line[0].isspace()
            and not line.startswith(("Traceback", "During handling", "The above exception"))
        ),
        "",
    )
    frames = [(m.group("path"), m.group("line")) for m in map(_PY_FRAME.match, block) if m]
    mine = [f for f in frames[-_FRAMES_CHECKED:] if own(os.path.realpath(f[0]))]
    where = (
        f" at {_safe(mine[-1][0])} line {mine[-1][1]}"
        if mine
        else (f" at {_safe(frames[-1][0])} line {frames[-1][1]}" if frames else "")
    )
    out = [f"Python raised {_safe(exc) if exc else 'an exception'}{where}"]
    m = re.match(r"ModuleNotFoundError: No module named '([^']+)'", exc)
    if m:
        out.append(
            f"the module {_safe(m.group(1))} is not installed where the bot's interpreter looks "
            f"(a Python bot: the arena's own environment; a program bot: the venv its manifest names)"
        )
    return out


def _java(text: str) -> list[str]:
    """A Java exception: the innermost ``Caused by`` (or the thread's exception) and its first source line.
    Each pattern is one pass of the regex engine over the text: a bot's stderr is its to shape."""
    found = list(_JAVA_CAUSE.finditer(text)) or list(_JAVA_THREAD.finditer(text))
    last = found[-1] if found else None
    if last is None:
        m = re.search(r"^Error: Could not find or load main class .+$", text, re.M)
        return [f"Java says: {_safe(m.group())}"] if m else []
    frame = _JAVA_FRAME.search(text, last.end())
    where = (
        f" at {_safe(frame.group('file'))} line {frame.group('line')} ({_safe(frame.group('where'))})" if frame else ""
    )
    return [f"Java raised {_safe(last.group(1))}{where}"]


def stdout_hints(line: bytes, program: str) -> list[str]:
    """Why a bot wrote something other than ``ready`` on stdout, where it can be told."""
    if os.path.basename(program) == "java" or re.match(rb"\[\d+\.\d+s\]\[|OpenJDK .*VM warning", line):
        return [
            "the JVM writes its own messages and warnings on stdout: add -XX:+DisplayVMOutputToStderr "
            "-Xlog:disable -Xlog:all=warning:stderr to the command (before the class or -jar)"
        ]
    return []
