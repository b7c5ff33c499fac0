"""asmscan: read PTX, SASS listings and ptxas -v reports, kernel by kernel.

Shared by tools/compile/checks.py and evidence.py. Python 3 standard
library only. Every function takes text (str) and returns plain
dicts, so the tests can feed it fixtures without a compiler.

Kernel names are the mangled names the tools print (for example
_Z15matmulTilePipedPKfS0_Pfi); kernel_role() maps one to "piped", "sync" or
"outside" by looking for the lesson's two kernel names inside it.
"""

import re
from collections import Counter

PIPED = "matmulTilePiped"
SYNC = "matmulTileSync"
# A kernel's role comes from its name: matmul...Piped or matmul...Sync, so a
# second kernel pair (say matmulRegPiped) joins the roles without a change.
_ROLE = re.compile(r"matmul\w*?(Piped|Sync)")

# A PTX function header: ".visible .entry NAME(", ".entry NAME(",
# ".func (.param ...) NAME(" and so on. The name is the last identifier
# before the parameter list.
_PTX_HEADER = re.compile(
    r"^\s*(?:\.(?:visible|extern|weak)\s+)*\.(entry|func)\b(.*)$")
_PTX_NAME = re.compile(r"([A-Za-z_$%][\w$%]*)\s*(?:\(|$)")
# The global-to-shared copy forms of cp.async: .ca/.cg, with or without the
# ::cta state-space qualifier newer PTX spells out, and the bulk (TMA) form.
_COPY_FORM = re.compile(r"^cp\.async\.(?:(?:ca|cg)\.shared(?:::\w+)?\.global"
                        r"|bulk\.shared(?:::\w+)?\.global)")


def kernel_role(name):
    """Return "piped", "sync" or "outside" for a (mangled) function name.

    name: str, a PTX or SASS function name, or None for code outside any
    function. A name matching both roles (impossible here) counts as
    "outside", so it can never satisfy a check by accident.
    """
    roles = {m.lower() for m in _ROLE.findall(name or "")}
    return roles.pop() if len(roles) == 1 else "outside"


def _ptx_statements(line):
    """Split one PTX line (comments already removed) into instruction texts.

    Inline asm can put several instructions and braces on one line, e.g.
    "{.reg .pred %p;mbarrier.test_wait... ;selp.u16 ...;}"; each piece
    between ';', '{' and '}' is one statement. Returns a list of str.
    """
    return [s.strip() for s in re.split(r"[;{}]", line) if s.strip()]


def _strip_predicate(stmt):
    """Drop a leading guard such as "@%p1 " or "@!%p3 " from a statement."""
    return re.sub(r"^@!?%?\w+\s+", "", stmt)


def ptx_cp_async(text, prefix="cp.async"):
    """Count cp.async instructions in PTX text, per function and per form.

    text: str, a whole .ptx file. prefix: the mnemonic prefix counted
    (default "cp.async"; "mbarrier." counts the barrier instructions the
    same way, and then grep_lines counts lines containing that prefix).
    Returns {"functions": {name: {form: count}}, "outside": {form: count},
    "grep_lines": int}. A form is the instruction's full mnemonic with its
    qualifiers and without operands (e.g. "cp.async.cg.shared.global",
    "cp.async.mbarrier.arrive.shared.b64", "cp.async.wait_all"); a count is a
    number of instructions (in practice, of lines: nvcc writes one per line).
    Comments (// and /* */) never count. "outside" holds instructions found
    outside every .entry/.func body. "grep_lines" is the number of lines that
    merely contain "cp.async" anywhere, comments included: the crude count
    `grep -c cp.async` gives, kept to compare with older transcripts.
    Functions without any cp.async still appear, with an empty dict.
    Raises ValueError when the braces do not balance (not PTX, or truncated).
    """
    functions, outside = {}, Counter()
    grep_lines = 0
    current, pending, depth = None, None, 0
    in_block_comment = False
    for raw in text.splitlines():
        if prefix in raw:
            grep_lines += 1
        line = raw
        if in_block_comment:
            end = line.find("*/")
            if end < 0:
                continue
            line, in_block_comment = line[end + 2:], False
        line = re.sub(r"/\*.*?\*/", " ", line)
        if "/*" in line:
            line, in_block_comment = line[: line.index("/*")], True
        line = line.split("//", 1)[0]
        if depth == 0:
            m = _PTX_HEADER.match(line)
            if m:
                # The name follows .entry/.func; a .func may first declare its
                # return parameter in parentheses, which we skip.
                rest = re.sub(r"^\s*\([^)]*\)", "", m.group(2))
                n = _PTX_NAME.search(rest)
                pending = n.group(1) if n else None
                if pending is not None:
                    functions.setdefault(pending, Counter())
        for stmt in _ptx_statements(line) if (prefix in line) else ():
            op = _strip_predicate(stmt).split()[0] if stmt.split() else ""
            if op.startswith(prefix):
                inside = depth > 0 and current
                target = functions[current] if inside else outside
                target[op] += 1
        opened, closed = line.count("{"), line.count("}")
        if depth == 0 and pending is not None and ";" in line and not opened:
            # ".extern .func name(...);" declares without a body.
            if not functions[pending]:
                del functions[pending]
            pending = None
        if depth == 0 and opened and pending is not None:
            current, pending = pending, None
        depth += opened - closed
        if depth < 0:
            raise ValueError("unbalanced braces in PTX (more '}' than '{')")
        if depth == 0 and closed:
            current = None
    if depth != 0 or in_block_comment:
        raise ValueError("PTX ends inside a function body or a comment "
                         "(truncated file?)")
    return {
        "functions": {k: dict(v) for k, v in functions.items()},
        "outside": dict(outside),
        "grep_lines": grep_lines,
    }


def is_copy_form(form):
    """True when a cp.async form copies global memory into shared memory."""
    return bool(_COPY_FORM.match(form))


def form_family(form):
    """Map a cp.async form to the family the reports count.

    Returns one of "copy" (global-to-shared), "mbarrier_arrive",
    "commit_group", "wait_group", "wait_all", "other".
    """
    if is_copy_form(form):
        return "copy"
    for fam in ("mbarrier.arrive", "commit_group", "wait_group", "wait_all"):
        if form.startswith("cp.async." + fam):
            return fam.replace(".", "_")
    return "other"


# A SASS instruction line of `cuobjdump -sass`:
#   /*0120*/   @!P0 LDGSTS.E.BYPASS.128 [R3], [R4.64] ;   /* 0x... */
_SASS_INSN = re.compile(r"^\s*/\*[0-9a-fA-F]{4,}\*/\s+(?:@!?U?P\w+\s+)?"
                        r"([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)")
_SASS_FUNC = re.compile(r"^\s*Function\s*:\s*(\S+)")
_SASS_ARCH = re.compile(r"^\s*code for (sm_\d+\w*)")


def sass_opcodes(text):
    """Count SASS opcodes per function in `cuobjdump -sass` output.

    text: str, the listing. Returns {"arch": "sm_80" or None,
    "functions": {name: {"opcodes": {BASE: count}, "forms": {FULL: count}}}}
    where BASE is the opcode before its first '.' (LDGSTS, LDG, STS) and FULL
    the opcode with its modifiers (LDGSTS.E.BYPASS.128). Raises ValueError
    when the listing names no function (an empty or failed disassembly).
    """
    arch, current = None, None
    functions = {}
    for line in text.splitlines():
        m = _SASS_ARCH.match(line)
        if m and arch is None:
            arch = m.group(1)
        m = _SASS_FUNC.match(line)
        if m:
            current = m.group(1)
            functions.setdefault(current, {"opcodes": Counter(),
                                           "forms": Counter()})
            continue
        m = _SASS_INSN.match(line)
        if m and current is not None:
            full = m.group(1)
            functions[current]["forms"][full] += 1
            functions[current]["opcodes"][full.split(".")[0]] += 1
    if not functions:
        raise ValueError("no 'Function :' header in the SASS listing "
                         "(did cuobjdump fail?)")
    return {
        "arch": arch,
        "functions": {k: {"opcodes": dict(v["opcodes"]),
                          "forms": dict(v["forms"])}
                      for k, v in functions.items()},
    }


_PTXAS_ENTRY = re.compile(
    r"ptxas info\s*: Compiling entry function '([^']+)' for '(\w+)'")
_PTXAS_PROPS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill "
                          r"stores, (\d+) bytes spill loads")
_PTXAS_USED = re.compile(r"ptxas info\s*: Used (\d+) registers(.*)$")


def ptxas_report(text):
    """Parse `nvcc -Xptxas -v` output into per-kernel resource use.

    text: str, the compiler's stderr. Returns {name: {"arch": "sm_80",
    "registers": int, "smem_bytes": int, "stack_bytes": int,
    "spill_store_bytes": int, "spill_load_bytes": int, "lines": [str]}};
    "lines" are the ptxas lines about that kernel, verbatim, for transcripts.
    A kernel whose "Used ..." line lacks "bytes smem" has smem_bytes 0 (ptxas
    omits it when the kernel declares none). Raises ValueError when a kernel
    has no "Used N registers" line (the report is truncated or changed format).
    """
    kernels, current = {}, None
    for line in text.splitlines():
        m = _PTXAS_ENTRY.search(line)
        if m:
            current = m.group(1)
            kernels[current] = {"arch": m.group(2), "lines": [line.strip()]}
            continue
        if current is None:
            continue
        k = kernels[current]
        m = _PTXAS_PROPS.search(line)
        if m:
            (k["stack_bytes"], k["spill_store_bytes"],
             k["spill_load_bytes"]) = map(int, m.groups())
            k["lines"].append(line.strip())
            continue
        m = _PTXAS_USED.search(line)
        if m:
            k["registers"] = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", m.group(2))
            k["smem_bytes"] = int(s.group(1)) if s else 0
            k["lines"].append(line.strip())
            current = None
    for name, k in kernels.items():
        if "registers" not in k:
            raise ValueError("ptxas report has no 'Used N registers' line "
                             "for " + name)
        k.setdefault("stack_bytes", 0)
        k.setdefault("spill_store_bytes", 0)
        k.setdefault("spill_load_bytes", 0)
    return kernels


def by_role(per_function):
    """Regroup {function name: value} as {role: [(name, value)]}, role
    being "piped", "sync" or "outside"."""
    out = {"piped": [], "sync": [], "outside": []}
    for name, value in sorted(per_function.items()):
        out[kernel_role(name)].append((name, value))
    return out


def static_assert_messages(text):
    """The texts of the static assertions that failed in compiler output."""
    return re.findall(r'static assertion failed with "((?:[^"\\]|\\.)*)"', text)


def fmt_forms(forms):
    """"2 x A, 1 x B" for a {form: count} dict ("" when empty)."""
    return ", ".join(f"{n} x {k}" for k, n in sorted(forms.items()))
