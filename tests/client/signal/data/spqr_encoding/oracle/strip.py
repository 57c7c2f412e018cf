"""Print a spqr source file without its hax (formal verification) and thiserror annotations.

Attributes `#[hax_lib::...]`, `#[requires(...)]`, `#[ensures(...)]` and `#[error(...)]`
are dropped, `hax_lib::name!(...)` calls become `()`, the `cpufeatures` probe becomes
std's, and the unit tests (which need other crates) are cut off.
"""

import re
import sys

ATTRIBUTE = re.compile(r"#\[(hax_lib::|requires\(|ensures\(|error\()")
MACRO_CALL = re.compile(r"hax_lib::[a-z_]+!\s*\(")
CPU_PROBE = 'cpufeatures::new!(use_accelerated, "pclmulqdq");'
CPU_PROBE_STD = (
    "pub mod use_accelerated { #[derive(Clone, Copy)] pub struct InitToken(bool);"
    " impl InitToken { pub fn get(&self) -> bool { self.0 } }"
    ' pub fn init() -> InitToken { InitToken(std::env::var("NO_CLMUL").is_err()'
    ' && std::is_x86_feature_detected!("pclmulqdq")) } }'
)


def string_end(text: str, i: int) -> int | None:
    """End of the string literal starting at i, or None when none starts there."""
    if text.startswith('r#"', i):
        return text.index('"#', i + 3) + 2
    if text[i] == '"':
        j = i + 1
        while text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        return j + 1
    return None


def group_end(text: str, i: int) -> int:
    """End of the bracketed group opening at i, skipping string literals."""
    depth = 0
    j = i
    while True:
        end = string_end(text, j)
        if end is not None:
            j = end
            continue
        if text[j] in "([{":
            depth += 1
        elif text[j] in ")]}":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1


def strip(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        end = string_end(text, i)
        if end is not None:
            out.append(text[i:end])
            i = end
        elif ATTRIBUTE.match(text, i):
            i = group_end(text, i + 1)
        elif match := MACRO_CALL.match(text, i):
            out.append("()")
            i = group_end(text, match.end() - 1)
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def main() -> None:
    with open(sys.argv[1]) as source:
        text = strip(source.read())
    text = text.replace("thiserror::Error, ", "").replace(CPU_PROBE, CPU_PROBE_STD)
    tests = text.find("#[cfg(test)]\nmod test")
    sys.stdout.write(text if tests < 0 else text[:tests])


if __name__ == "__main__":
    main()
