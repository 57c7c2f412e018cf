"""The repository passes what HACS's validation checks, offline.

Mirrors the checks of HACS's action (hacs/integration, custom_components/hacs/validate/)
that look at the repository's files: hacsjson, integration_manifest, brands, information,
license, core_domain_override, and the layout HACS installs from (the first directory under
custom_components/). The checks that ask GitHub (description, topics, issues, archived) are
repository settings, not files.
"""

import importlib.metadata
import importlib.util
import json
import re
import struct
from pathlib import Path
from typing import Any

import probatio
import pytest
from awesomeversion import AwesomeVersion
from homeassistant.const import __version__ as ha_version
from homeassistant.helpers import config_validation as cv

REPO = Path(__file__).parents[2]
CUSTOM_COMPONENTS = REPO / "custom_components"

# HACS_MANIFEST_JSON_SCHEMA (custom_components/hacs/utils/validate.py): hacs.json's keys.
HACS_JSON_SCHEMA = probatio.Schema(
    {
        probatio.Required("name"): str,
        probatio.Optional("content_in_root"): bool,
        probatio.Optional("country"): probatio.Any(str, [str]),
        probatio.Optional("filename"): str,
        probatio.Optional("hacs"): str,
        probatio.Optional("hide_default_branch"): bool,
        probatio.Optional("homeassistant"): str,
        probatio.Optional("persistent_directory"): str,
        probatio.Optional("render_readme"): bool,
        probatio.Optional("zip_release"): bool,
    }
)

# INTEGRATION_MANIFEST_JSON_SCHEMA (same file): HACS validates URLs with Home Assistant's
# own cv.url, as here.
MANIFEST_SCHEMA = probatio.Schema(
    {
        probatio.Required("codeowners"): [str],
        probatio.Required("documentation"): cv.url,
        probatio.Required("domain"): str,
        probatio.Required("issue_tracker"): cv.url,
        probatio.Required("name"): str,
        probatio.Required("version"): probatio.Coerce(AwesomeVersion),
    },
    extra=probatio.ALLOW_EXTRA,
)

# repositories/integration.py: the domain names the folder HACS writes to.
VALID_DOMAIN = re.compile(r"^[a-z0-9_]+$")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Home Assistant's brand image sizes (developers' "Brands" rules): a square icon.
BRAND_ICON_SIZES = {"icon.png": 256, "icon@2x.png": 512}


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def integration_folders() -> list[Path]:
    return sorted(
        path for path in CUSTOM_COMPONENTS.iterdir() if path.is_dir() and path.name != "__pycache__"
    )


def test_exactly_one_integration_folder() -> None:
    """HACS installs the first folder under custom_components/: there must be only one."""
    folders = integration_folders()
    assert [folder.name for folder in folders] == ["pacerelle"]
    assert (folders[0] / "manifest.json").is_file()
    hacs = load(REPO / "hacs.json")
    assert not hacs.get("content_in_root", False)


def test_hacs_json() -> None:
    hacs = HACS_JSON_SCHEMA(load(REPO / "hacs.json"))
    # hacsjson.py: a zipped release must name its file.
    assert not hacs.get("zip_release") or hacs.get("filename")
    assert hacs["name"] == "Pacerelle"
    assert hacs["render_readme"] is True


def test_hacs_json_rejects_what_hacs_rejects() -> None:
    for bad in ({}, {"name": "Pacerelle", "render_readme": "true"}, {"name": "P", "x": 1}):
        with pytest.raises(probatio.Invalid):
            HACS_JSON_SCHEMA(bad)


def test_minimum_home_assistant_is_one_the_suite_runs_on() -> None:
    """HACS refuses to install on an older Home Assistant than hacs.json's minimum; the
    minimum is the oldest release line the suite runs on (README, Supported versions)."""
    minimum = AwesomeVersion(load(REPO / "hacs.json")["homeassistant"])
    assert minimum.valid
    assert minimum <= AwesomeVersion(ha_version)
    pinned = next(
        AwesomeVersion(requirement.split("==")[1])
        for requirement in importlib.metadata.requires("pytest-homeassistant-custom-component")
        or []
        if requirement.startswith("homeassistant==")
    )
    assert (minimum.major, minimum.minor) == (pinned.major, pinned.minor)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"Home Assistant {minimum.major}.{minimum.minor} or newer" in readme


def test_manifest_passes_hacs() -> None:
    folder = integration_folders()[0]
    manifest = MANIFEST_SCHEMA(load(folder / "manifest.json"))
    assert manifest["domain"] == folder.name
    assert VALID_DOMAIN.match(manifest["domain"])
    assert manifest["version"].valid
    assert manifest["codeowners"]
    assert all(owner.startswith("@") for owner in manifest["codeowners"])


def test_domain_is_not_a_core_integration() -> None:
    """core_domain_override.py: a custom integration must not shadow a core one."""
    domain = integration_folders()[0].name
    assert importlib.util.find_spec(f"homeassistant.components.{domain}") is None


def test_brand_icon_is_in_the_integration() -> None:
    """brands.py: `<integration>/brand/icon.png` passes without the brands repository
    (Home Assistant 2026.3+ serves it, tests/integration/test_brand.py)."""
    brand = integration_folders()[0] / "brand"
    for name, size in BRAND_ICON_SIZES.items():
        data = (brand / name).read_bytes()
        assert data.startswith(PNG_SIGNATURE), name
        width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
        assert (width, height) == (size, size), name


def test_information_file() -> None:
    """information.py: a README (or info) file at the root."""
    names = {path.name.lower() for path in REPO.iterdir()}
    assert names & {"readme", "readme.md", "info", "info.md"}


def test_license_is_mit() -> None:
    """license.py reads GitHub's license key, which must be an open source one: GitHub
    detects MIT from the standard text, so LICENSE is that text, unchanged."""
    text = " ".join((REPO / "LICENSE").read_text(encoding="utf-8").split())
    assert text.startswith("MIT License Copyright (c) 2026 ")
    for sentence in (
        "Permission is hereby granted, free of charge, to any person obtaining a copy of "
        'this software and associated documentation files (the "Software"), to deal in '
        "the Software without restriction,",
        "The above copyright notice and this permission notice shall be included in all "
        "copies or substantial portions of the Software.",
        'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND,',
    ):
        assert sentence in text


IMAGES = "https://raw.githubusercontent.com/pacerelle/ha-pacerelle/main/"


def test_readme_images_are_absolute_and_exist() -> None:
    """HACS shows the README inside Home Assistant, where a relative link breaks: every
    image is an absolute link, ours to a file of this repository's docs/images."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme)
    assert images
    assert all(link.startswith("https://") for link in images), images
    ours = [link.removeprefix(IMAGES) for link in images if link.startswith(IMAGES)]
    assert ours
    for path in ours:
        assert path.startswith("docs/images/"), path
        assert (REPO / path).is_file(), path


FILES = "https://github.com/pacerelle/ha-pacerelle/blob/main/"


def test_readme_links_to_files_are_absolute_and_exist() -> None:
    """Likewise every link to a file of the repository (the changelog, the developer's
    document): absolute, and naming a file that exists; the rest are anchors or sites."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)", readme)
    relative = [link for link in links if not link.startswith(("https://", "http://", "#"))]
    assert relative == []
    ours = [link.removeprefix(FILES).split("#")[0] for link in links if link.startswith(FILES)]
    assert "CHANGELOG.md" in ours
    for path in ours:
        assert (REPO / path).is_file(), path
