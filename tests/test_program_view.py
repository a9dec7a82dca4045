"""A program bot's file view (arena/sandbox/programview.py, docs/sandbox.md
"The file view"): a manifest bot reads copies on a tmpfs of what its program
needs (its runtime, a shell's tools, the libraries its own ELF files name),
so the kernel's caches of the host's files tell it nothing (the attack:
tests/test_cache_channels.py, the spy as a program bot); what its view lacks
is absent, and a bot that needs it is told what to add (the manifest's
``view`` list).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from arena.botfile.spec import load_bot
from arena.errors import ConfigError, SandboxError
from arena.match.process import BotCrashed, BotProcess, TimeControl
from arena.sandbox import SandboxLimits, available, mounts, programview
from arena.sandbox import view as fileview

pytestmark = [
    pytest.mark.sandbox,  # run as root and as an unprivileged user in CI
    pytest.mark.skipif(available().bwrap is None, reason="bubblewrap is not installed"),
    pytest.mark.skipif(fileview.unavailable() is not None, reason=f"no view: {fileview.unavailable()}"),
]

# A shell bot that says, before ready, which of $LOOK exist inside (one JSON
# line on stderr), and how many entries /usr/bin has.
LOOKER = """\
#!/bin/sh
out="{"
for p in $LOOK; do
  if [ -e "$p" ]; then v=true; else v=false; fi
  out="$out\\"$p\\": $v, "
done
echo "$out\\"bin\\": $(ls /usr/bin | wc -l)}" >&2
while IFS= read -r line; do
  case "$line" in
    *'"hello"'*) echo '{"type": "ready", "name": "looker"}' ;;
    *'"turn"'*) echo '{"action": "dudo"}' ;;
  esac
done
"""


# A C bot using libm (sqrt, cbrt of $X or 2), linked so that it names libm.
MATH_BOT = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    char line[65536];
    volatile double x = atof(getenv("X") ? getenv("X") : "2");
    setvbuf(stdout, NULL, _IOLBF, 0);
    fprintf(stderr, "root %.3f\n", sqrt(x) + cbrt(x));
    while (fgets(line, sizeof line, stdin)) {
        if (strstr(line, "\"hello\"")) puts("{\"type\":\"ready\",\"name\":\"mbot\"}");
        else if (strstr(line, "\"turn\"")) puts("{\"action\":\"dudo\"}");
    }
    return 0;
}
"""


def shell_bot(folder: Path, name: str, script: str, extra: str = "") -> Path:
    (folder / name).mkdir(parents=True)
    (folder / name / "bot.sh").write_text(script)
    manifest = folder / f"{name}.yaml"
    manifest.write_text(f"command: [sh, ./{name}/bot.sh]\n{extra}")
    return manifest


def start(manifest: Path, env: dict[str, str] | None = None) -> str:
    """Start the bot to ``ready`` and close it; its stderr."""
    spec = load_bot(manifest)
    if env:
        import dataclasses

        spec = dataclasses.replace(spec, env=env)
    bot = BotProcess(spec, SandboxLimits().for_bot(spec.limits), TimeControl(hello_ms=60000))
    try:
        bot.start()
    finally:
        bot.close()
    return bot.stderr_tail()


def test_a_shell_bot_sees_its_tools_and_nothing_else_of_the_system(tmp_path: Path) -> None:
    needed = ["/usr/bin/tr", "/usr/bin/seq", "/usr/bin/head", "/usr/bin/sleep", "/bin/sh"]
    outside = ["/usr/bin/perl", "/usr/bin/gcc", "/usr/share/doc", "/usr/lib/jvm", "/etc/ssl/certs", "/usr/bin/apt"]
    needed = [p for p in needed if os.path.exists(p)]
    outside = [p for p in outside if os.path.exists(p)]
    assert len(needed) >= 4 and len(outside) >= 3, (needed, outside)
    err = start(shell_bot(tmp_path, "looker", LOOKER), {"LOOK": " ".join(needed + outside)})
    seen = json.loads(next(line for line in err.splitlines() if line.startswith("{")))
    assert [p for p in needed if not seen[p]] == []
    assert [p for p in outside if seen[p]] == []
    assert seen["bin"] < len(os.listdir("/usr/bin")) // 4, seen["bin"]  # the host has all of them


def test_every_bound_file_of_a_program_bot_comes_from_the_tmpfs(tmp_path: Path) -> None:
    spec = load_bot(shell_bot(tmp_path, "plain", LOOKER))
    args = mounts.bwrap_args("bwrap", spec, SandboxLimits(), ["x"])
    binds = [(args[i + 1], args[i + 2]) for i, a in enumerate(args) if a in ("--ro-bind", "--bind")]
    parent = os.path.join(os.environ.get("ARENA_VIEW_ROOT") or "/dev/shm", f"arena-view-{os.geteuid()}")
    snapshots = os.path.dirname(mounts._proc_snapshots()[0][0])
    from_disk = [
        (src, dst)
        for src, dst in binds
        if not src.startswith(parent + "/") and src != "/dev/null" and not src.startswith(snapshots)
    ]
    assert from_disk == []
    assert "/usr" in {dst for _, dst in binds}


def test_a_command_the_view_lacks_is_named_with_what_to_do_and_the_view_key_adds_it(tmp_path: Path) -> None:
    perl = shutil.which("perl", path=programview.SANDBOX_PATH)
    if perl is None:
        pytest.skip("no perl on this machine")
    script = LOOKER.replace("#!/bin/sh\n", "#!/bin/sh\nperl -e 'print STDERR qq(perl ran\\n)' || exit 5\n")
    with pytest.raises(BotCrashed) as err:
        start(shell_bot(tmp_path / "a", "perly", script))
    assert "the command perl is not in the bot's file view" in str(err.value)
    assert "e.g. view: [/usr/bin/perl]" in str(err.value)
    # As the message says: named in the manifest, it is there.
    assert "perl ran" in start(shell_bot(tmp_path / "b", "perly", script, f"view: [{perl}]\n"), {"LOOK": ""})


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler")
def test_a_compiled_bot_gets_the_libraries_its_elf_file_names(tmp_path: Path) -> None:
    """libm is in no other part of the view (the shell and the launcher do not
    need it): it is there because the bot's own binary names it (DT_NEEDED)."""
    (tmp_path / "mbot").mkdir()
    src = tmp_path / "mbot" / "main.c"
    src.write_text(MATH_BOT)
    binary = tmp_path / "mbot" / "mbot"
    subprocess.run(["gcc", "-O0", "-o", str(binary), str(src), "-Wl,--no-as-needed", "-lm"], check=True, timeout=120)
    needed, interp = programview.elf_needs(str(binary))
    assert "libm.so.6" in needed and "libc.so.6" in needed and interp and interp.startswith("/lib")
    (tmp_path / "mbot.yaml").write_text("command: [./mbot/mbot]\n")
    assert "root 2.674" in start(tmp_path / "mbot.yaml")


def test_elf_needs_reads_what_ldd_finds_without_running_anything(tmp_path: Path) -> None:
    ls = shutil.which("ls")
    assert ls is not None
    needed, _ = programview.elf_needs(ls)
    ldd = subprocess.run(["ldd", ls], capture_output=True, text=True, check=True).stdout
    assert needed and all(name in ldd for name in needed)
    # Not ELF, cut short, or a 32-bit header: nothing, and no error.
    (tmp_path / "x").write_bytes(b"\x7fELF\x02\x01" + b"\0" * 30)
    (tmp_path / "y").write_text("#!/bin/sh\n")
    (tmp_path / "z").write_bytes(Path(ls).read_bytes()[:2000])
    for f in ("x", "y", "z"):
        assert programview.elf_needs(str(tmp_path / f))[0] == []


@pytest.mark.skipif(shutil.which("python3", path=programview.SANDBOX_PATH) is None, reason="no system python3")
@pytest.mark.parametrize("how", ["env", "shebang"])
def test_a_python_found_on_the_sandboxs_path_brings_its_standard_library(tmp_path: Path, how: str) -> None:
    """`command: [env, python3, ...]` and a script's `#!/usr/bin/env python3`: the
    interpreter is looked up inside, on the sandbox's PATH; its view has it and
    its standard library (json, decimal: a compiled module of it)."""
    (tmp_path / "pyb").mkdir()
    script = tmp_path / "pyb" / "bot.py"
    script.write_text(
        "#!/usr/bin/env python3\n"
        "import decimal, json, sys\n"
        "print('stdlib', decimal.Decimal('1.5') * 2, file=sys.stderr, flush=True)\n"
        "for line in sys.stdin:\n"
        "    if json.loads(line)['type'] == 'hello':\n"
        "        print(json.dumps({'type': 'ready', 'name': 'pyb'}), flush=True)\n"
    )
    script.chmod(0o755)
    command = "[env, python3, -I, ./pyb/bot.py]" if how == "env" else "[./pyb/bot.py]"
    (tmp_path / "pyb.yaml").write_text(f"command: {command}\n")
    assert "stdlib 3.0" in start(tmp_path / "pyb.yaml")


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("[relative/awk]", "must be an absolute path"),
        ("[/usr/../root/.ssh]", "without '..'"),
        ("[/home]", "under the system folders"),
        ("[/etc]", "a file of /etc"),
        ("[/usr/bin/arena-no-such-tool]", "does not exist on this machine"),
        ("/usr/bin/awk", "must be a list of absolute paths"),
    ],
)
def test_a_bad_view_list_is_refused_naming_the_value(tmp_path: Path, value: str, words: str) -> None:
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "bot.sh").write_text("#!/bin/sh\n")
    (tmp_path / "v.yaml").write_text(f"command: [sh, ./v/bot.sh]\nview: {value}\n")
    with pytest.raises(ConfigError) as err:
        load_bot(tmp_path / "v.yaml")
    assert "view" in str(err.value) and words in str(err.value)


def test_bots_with_one_runtime_share_one_view(tmp_path: Path) -> None:
    """Two different shell bots: the same view (keyed by what it copies, not by the bot)."""
    a = load_bot(shell_bot(tmp_path, "one", LOOKER))
    b = load_bot(shell_bot(tmp_path, "two", LOOKER.replace("looker", "other")))
    assert a.sha256 != b.sha256
    va = programview.program_view(a, mounts.sandbox_programs())
    vb = programview.program_view(b, mounts.sandbox_programs())
    assert va.roots == vb.roots and os.path.isfile(os.path.join(va.root, ".complete"))


def _rare_system_file() -> str | None:
    """A large system library no process maps now (so its pages can be cold on the host)."""
    mapped = set()
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as f:
                    mapped.update(line.split(None, 5)[-1].strip() for line in f if "/" in line)
            except OSError:
                continue
    folder = "/usr/lib/x86_64-linux-gnu"
    if not os.path.isdir(folder):
        return None
    found = []
    for e in os.scandir(folder):
        if e.is_file(follow_symlinks=False) and e.stat().st_size >= 8 << 20 and e.path not in mapped:
            found.append((e.stat().st_size, e.path))
    return max(found)[1] if found else None


def c_timings(manifest: Path, target: str, n: int) -> dict[str, list[list[int]]]:
    """One sandbox of the C timer marks half the candidates, a second times them all."""
    tag = str(int.from_bytes(os.urandom(6), "big"))
    env = {"CT_TAG": tag, "CT_N": str(n), "CT_FILE": target, "CT_DIR": os.path.dirname(target)}
    start(manifest, {**env, "CT_MODE": "mark"})
    err = start(manifest, {**env, "CT_MODE": "probe"})
    out: dict[str, list[list[int]]] = json.loads(next(x for x in err.splitlines() if x.startswith("{")))
    return out


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler")
def test_a_compiled_bot_times_nothing_across_sandboxes_in_its_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A held-out attack, in C (tests/bots/cache_timer.c): one sandbox of the
    bot touches one page of each pair of a large system library and looks up
    one missing name of each pair; a second one times them all. The library
    is named in the manifest's view list, so it is a copy in memory: nothing
    marked is faster. The control, the host's files: by far."""
    import statistics

    target = _rare_system_file()
    if target is None:
        pytest.skip("no large system library unmapped on this machine")
    (tmp_path / "ctimer").mkdir()
    subprocess.run(
        [
            "gcc",
            "-O1",
            "-o",
            str(tmp_path / "ctimer" / "ctimer"),
            str(Path(__file__).parent / "bots" / "cache_timer.c"),
        ],
        check=True,
        timeout=120,
    )
    manifest = tmp_path / "ctimer.yaml"
    manifest.write_text(f"command: [./ctimer/ctimer]\nview: [{target}]\n")
    n = min(80, os.path.getsize(target) // (os.sysconf("SC_PAGE_SIZE") * 128))
    view = c_timings(manifest, target, n)
    with monkeypatch.context() as m:
        m.setattr(fileview, "unavailable", lambda: "off for the test")
        fd = os.open(target, os.O_RDONLY)
        try:  # cold on the host, as a rarely read file's pages are
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
        host = c_timings(manifest, target, n)
    med = {
        (name, what, k): statistics.median(r[what][k])
        for name, r in (("view", view), ("host", host))
        for what in ("read", "lookup")
        for k in (0, 1)
    }
    assert len(view["read"][0]) == n >= 20, n
    # The control: on the host's files, marked reads and lookups stand out.
    assert med["host", "read", 0] * 4 < med["host", "read", 1], med
    assert med["host", "lookup", 0] * 1.5 < med["host", "lookup", 1], med
    # In the view they do not: a generous margin, for a loaded machine.
    assert med["view", "read", 0] * 1.5 > med["view", "read", 1], med
    assert med["view", "lookup", 0] * 1.3 > med["view", "lookup", 1], med


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_a_runtime_file_the_referee_cannot_read_is_left_out_not_fatal(tmp_path: Path) -> None:
    """A file of a runtime folder the referee's user cannot read (so neither can
    its bots): the view is made without it, as a bind showed it unreadable."""
    src = tmp_path / "rt"
    src.mkdir()
    (src / "ok.txt").write_text("ok")
    (src / "secret").write_text("no")
    (src / "secret").chmod(0)
    dest = tmp_path / "dest"
    dest.mkdir()
    fileview._copy([str(src), str(src / "ok.txt"), str(src / "secret")], str(dest))
    assert (dest / str(src).lstrip("/") / "ok.txt").read_text() == "ok"
    assert not (dest / str(src).lstrip("/") / "secret").exists()


def test_a_view_larger_than_the_cap_is_refused_naming_its_largest_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A manifest naming a large folder in its view list (all of /usr, say)
    would have the machine copy it into memory: over ARENA_VIEW_MAX_MB the bot
    is refused, and told which parts are large."""
    big = "/usr/share/zoneinfo"
    if not os.path.isdir(big):
        pytest.skip(f"no {big} here")
    monkeypatch.setenv("ARENA_VIEW_MAX_MB", "1")
    with pytest.raises(SandboxError) as err:
        start(shell_bot(tmp_path, "greedy", LOOKER, f"view: [{big}]\n"))
    msg = str(err.value)
    assert "bot greedy: its file view would copy" in msg and "more than 1 MB" in msg and big in msg
    assert "ARENA_VIEW_MAX_MB" in msg


def test_a_bots_headers_bring_in_files_never_folders(tmp_path: Path) -> None:
    """A hostile bot's #! line naming /usr, or an ELF file needing '..', does
    not have the machine copy a whole tree into memory."""
    (tmp_path / "sly").mkdir()
    (tmp_path / "sly" / "run").write_text("#!/usr\n")
    (tmp_path / "sly" / "run").chmod(0o755)
    (tmp_path / "sly" / "bot.sh").write_text("#!/usr/lib\n")
    (tmp_path / "sly.yaml").write_text("command: [./sly/run]\n")
    sources, layers = programview.program_sources(load_bot(tmp_path / "sly.yaml"), mounts.sandbox_programs())
    assert "/usr/lib/os-release" not in sources and not [p for p in sources if p.startswith("/usr/share/doc")]
    assert len(sources) < 300 and layers == {}, len(sources)
    assert programview._library("..") is None and programview._library(".") is None
    assert programview._library("libc.so.6") is not None
