"""Every bound is named once, in one limits module per layer, each with its reason.

client/limits.py holds the client's bounds, limits.py the Home Assistant side's; the Signal
engine (client/signal/) keeps libsignal's own in its consts.py. A `MAX_` constant defined
anywhere else, or another 25 MiB literal, is a second copy of a bound that can drift.
"""

import ast
from pathlib import Path

import yaml

from custom_components.pacerelle import limits as ha_limits
from custom_components.pacerelle.client import limits as client_limits

PACKAGE = Path(__file__).parents[2] / "custom_components" / "pacerelle"
LIMITS_MODULES = (Path("limits.py"), Path("client/limits.py"))
ENGINE = Path("client/signal")
TWENTY_FIVE_MIB = 25 * 1024 * 1024


def _constant(node: ast.expr) -> object:
    """The value of an expression of number literals only, else None."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _constant(node.operand)
        return -value if isinstance(value, int | float) else None
    if isinstance(node, ast.BinOp):
        left, right = _constant(node.left), _constant(node.right)
        if not isinstance(left, int | float) or not isinstance(right, int | float):
            return None
        operators = {ast.Add: "__add__", ast.Sub: "__sub__", ast.Mult: "__mul__"}
        operators |= {ast.LShift: "__lshift__", ast.Pow: "__pow__"}
        name = operators.get(type(node.op))
        return None if name is None else getattr(left, name)(right)
    return None


def _names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [name for element in target.elts for name in _names(element)]
    return []


def stray_bounds(root: Path) -> list[str]:
    """`MAX_` definitions and 25 MiB literals outside the limits modules and the engine."""
    found: list[tuple[str, int, str]] = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative in LIMITS_MODULES or relative.is_relative_to(ENGINE):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AnnAssign | ast.AugAssign):
                targets = [node.target]
            for name in (name for target in targets for name in _names(target)):
                if name.lstrip("_").startswith("MAX_"):
                    found.append((str(relative), node.lineno, f"defines {name}"))
            if isinstance(node, ast.expr) and _constant(node) == TWENTY_FIVE_MIB:
                found.append((str(relative), node.lineno, "writes 25 MiB"))
    return [f"{path}:{line} {what}" for path, line, what in sorted(found)]


def test_no_bound_outside_the_limits_modules() -> None:
    assert stray_bounds(PACKAGE) == []


def test_the_scan_sees_a_stray_bound(tmp_path: Path) -> None:
    (tmp_path / "client" / "signal").mkdir(parents=True)
    (tmp_path / "client" / "signal" / "consts.py").write_text("MAX_FORWARD_JUMPS = 25_000\n")
    (tmp_path / "limits.py").write_text("MAX_VOICE_BYTES = 25 * 1024 * 1024\n")
    (tmp_path / "files.py").write_text(
        "class A:\n    _MAX_X: int = 3\n\nSIZE = 25 * 1024 * 1024 - 16\nMAX_A, B = 1, 2\n"
    )
    assert stray_bounds(tmp_path) == [
        "files.py:2 defines _MAX_X",
        "files.py:4 writes 25 MiB",
        "files.py:5 defines MAX_A",
    ]


def _bounds(module: object) -> list[tuple[str, bool]]:
    """Each bound of a limits module, and whether a docstring follows it or its group."""
    body = ast.parse(Path(str(getattr(module, "__file__", ""))).read_text(encoding="utf-8")).body
    bounds: list[tuple[str, bool]] = []
    for index, node in enumerate(body):
        if not isinstance(node, ast.Assign | ast.AnnAssign):
            continue
        following = body[index + 1 :]
        explained = False
        for later in following:
            if isinstance(later, ast.Expr) and isinstance(later.value, ast.Constant):
                explained = isinstance(later.value.value, str)
                break
            if not isinstance(later, ast.Assign | ast.AnnAssign):
                break
        target = node.targets[0] if isinstance(node, ast.Assign) else node.target
        bounds.extend((name, explained) for name in _names(target))
    return bounds


def test_every_bound_says_why_and_has_one_name() -> None:
    client, home = _bounds(client_limits), _bounds(ha_limits)
    assert [name for name, explained in client + home if not explained] == []
    names = [name for name, _ in client + home]
    assert len(names) == len(set(names))


def test_the_action_forms_show_the_same_bounds() -> None:
    """services.yaml's number boxes cannot import a constant: they must agree with one."""
    services = yaml.safe_load((PACKAGE / "services.yaml").read_text(encoding="utf-8"))
    ask_timeout = services["ask"]["fields"]["timeout"]["selector"]["number"]
    history_limit = services["get_history"]["fields"]["limit"]["selector"]["number"]
    assert ask_timeout["max"] == ha_limits.MAX_ASK_TIMEOUT
    assert history_limit["max"] == client_limits.MAX_HISTORY_ENTRIES
