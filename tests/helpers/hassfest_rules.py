"""hassfest's rules for strings.json, translations, services.yaml and icons.json, offline.

hassfest (script/hassfest/ in home-assistant/core) is not part of the `homeassistant`
package, so its schemas cannot be imported. These schemas apply the same rules, written
for this project on the validators hassfest itself builds on, which the package does ship:
`homeassistant.helpers.config_validation` (string_with_no_html, slug, schema_with_slug_keys),
`homeassistant.helpers.selector` (validate_selector, TargetSelector) and probatio, the
validation library of Home Assistant 2026.10. Each part names the hassfest function whose
rules it mirrors (read in home-assistant/core around 2026.10). Where hassfest only warns a
custom integration (a `title` inside `config`), these schemas reject: a rule followed is
never a hassfest failure.
"""

import re
import string
from collections.abc import Callable
from typing import Any

import probatio
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers import selector, service

Validator = Callable[[Any], Any]

# translations.py: RE_TRANSLATION_KEY, RE_COMBINED_REFERENCE, RE_PLACEHOLDER_IN_SINGLE_QUOTES
# and RE_URL (a URL belongs in a description placeholder, so translators cannot change it).
_KEY = re.compile(r"^(?!.+[_-]{2})(?![_-])[a-z0-9-_]+(?<![_-])$")
_TEXT_AROUND_REFERENCE = re.compile(r"(.+\[%)|(%\].+)")
_QUOTED_PLACEHOLDER = re.compile(r"'{\w+}'")
_URL = re.compile(
    r"(((ftp|ftps|scp|http|https|mqtt|mqtts|socket|socks5)://|www\.)"
    r"[a-z0-9]+([\-\.][a-z0-9]+)*\.[a-z]{2,5}(:[0-9]{1,5})?(/.*)?)",
    re.IGNORECASE,
)


def translation_key(value: Any) -> str:
    """translations.py translation_key_validator: lower case, digits, `-` and `_` inside."""
    if not isinstance(value, str) or not _KEY.match(value):
        raise probatio.Invalid(f"invalid translation key {value!r}")
    return value


def text(*, placeholders: bool = True) -> Validator:
    """translations.py validate_translation_value: one translated sentence."""

    def validate(value: Any) -> str:
        value = cv.string_with_no_html(value)
        if _QUOTED_PLACEHOLDER.search(value):
            raise probatio.Invalid("a placeholder inside single quotes")
        for _, field, _, _ in string.Formatter().parse(value):
            if field and not placeholders:
                raise probatio.Invalid("no placeholder is allowed here")
            if field and not field.isidentifier():
                raise probatio.Invalid(f"placeholder {field!r} is not an identifier")
        if _TEXT_AROUND_REFERENCE.search(value):
            raise probatio.Invalid("a reference combined with other text")
        if value != value.strip():
            raise probatio.Invalid("leading or trailing whitespace")
        if _URL.search(value):
            raise probatio.Invalid("a URL: use a description placeholder")
        return value

    return validate


TEXT = text()
STATE_TEXT = text(placeholders=False)


def keyed(value: Any, keys: Validator = translation_key) -> Validator:
    """A mapping whose keys pass `keys` and whose values pass `value`."""
    return cv.schema_with_slug_keys(value, slug_validator=keys)


def _data_descriptions_describe_data(flow: dict[str, Any]) -> dict[str, Any]:
    """translations.py gen_data_entry_schema: data_description only for fields in data."""
    for step_id, step in flow.get("step", {}).items():
        extra = set(step.get("data_description", {})) - set(step.get("data", {}))
        if extra:
            raise probatio.Invalid(f"step {step_id}: data_description for {sorted(extra)}")
    return flow


def flow_schema(*, subentry: bool = False) -> Validator:
    """translations.py gen_data_entry_schema: config, options, subentry and repair flows."""
    texts = {str: TEXT}
    step = {
        probatio.Optional("title"): TEXT,
        probatio.Optional("description"): TEXT,
        probatio.Optional("data"): texts,
        probatio.Optional("data_description"): texts,
        probatio.Optional("menu_options"): texts,
        probatio.Optional("menu_option_descriptions"): texts,
        probatio.Optional("submit"): TEXT,
        probatio.Optional("sections"): {
            str: {
                probatio.Optional(key): value
                for key, value in (
                    ("name", TEXT),
                    ("description", TEXT),
                    ("data", texts),
                    ("data_description", texts),
                )
            }
        },
    }
    schema: dict[Any, Any] = {
        probatio.Optional("flow_title"): TEXT,
        probatio.Required("step"): {str: step},
        **{probatio.Optional(key): texts for key in ("error", "abort", "progress")},
        probatio.Optional("create_entry"): texts,
    }
    if subentry:
        schema[probatio.Required("entry_type")] = TEXT
        schema[probatio.Required("initiate_flow")] = {probatio.Required("user"): TEXT, str: TEXT}
    else:
        schema[probatio.Optional("initiate_flow")] = {probatio.Required("user"): TEXT}
    return probatio.All(probatio.Schema(schema), _data_descriptions_describe_data)


# translations.py gen_issues_schema: a repair says what is wrong, and either describes the
# fix or offers a flow that makes it, never both.
_ISSUE = probatio.All(
    probatio.AtLeastOne("description", "fix_flow"),
    probatio.Schema(
        {
            probatio.Required("title"): TEXT,
            probatio.Exclusive("description", "fix"): TEXT,
            probatio.Exclusive("fix_flow", "fix"): flow_schema(),
        }
    ),
)

# translations.py gen_strings_schema, "entity": names may carry placeholders, states not.
_ENTITY = {
    probatio.Optional("name"): TEXT,
    probatio.Optional("state"): keyed(STATE_TEXT),
    probatio.Optional("state_attributes"): keyed(
        {
            probatio.Optional("name"): STATE_TEXT,
            probatio.Optional("state"): keyed(STATE_TEXT),
        }
    ),
    probatio.Optional("unit_of_measurement"): STATE_TEXT,
}

_FIELD_TEXTS = {
    probatio.Required("name"): str,
    probatio.Required("description"): TEXT,
    probatio.Optional("example"): TEXT,
}

# translations.py gen_strings_schema, "services", "conditions", "triggers".
_SERVICE_TEXTS = {
    probatio.Required("name"): TEXT,
    probatio.Required("description"): TEXT,
    probatio.Optional("fields"): keyed(_FIELD_TEXTS),
    probatio.Optional("sections"): keyed(
        {probatio.Required("name"): str, probatio.Optional("description"): TEXT}
    ),
}
_TRIGGER_TEXTS = {
    probatio.Required("name"): TEXT,
    probatio.Required("description"): TEXT,
    probatio.Optional("fields"): keyed(_FIELD_TEXTS),
}

_SLUG_OR_DEFAULT = probatio.Any("_", cv.slug)

# translations.py gen_strings_schema: what an integration's strings.json and every file in
# its translations/ may hold. A key hassfest does not know is an error.
STRINGS_SCHEMA = probatio.Schema(
    {
        probatio.Optional("title"): TEXT,
        probatio.Optional("config"): flow_schema(),
        probatio.Optional("config_subentries"): keyed(
            flow_schema(subentry=True), keys=_SLUG_OR_DEFAULT
        ),
        probatio.Optional("options"): flow_schema(),
        probatio.Optional("selector"): keyed(
            {
                probatio.Optional("options"): keyed(TEXT),
                probatio.Optional("choices"): keyed(TEXT),
                probatio.Optional("unit_of_measurement"): keyed(TEXT),
                probatio.Optional("fields"): keyed(
                    {probatio.Required("name"): str, probatio.Required("description"): TEXT}
                ),
            },
            keys=_SLUG_OR_DEFAULT,
        ),
        probatio.Optional("device_automation"): {
            probatio.Optional(key): {str: TEXT}
            for key in (
                "action_type",
                "condition_type",
                "trigger_type",
                "trigger_subtype",
                "extra_fields",
                "extra_fields_descriptions",
            )
        },
        probatio.Optional("system_health"): {probatio.Optional("info"): keyed(TEXT)},
        probatio.Optional("application_credentials"): {probatio.Optional("description"): TEXT},
        probatio.Optional("issues"): {str: _ISSUE},
        probatio.Optional("device"): keyed({probatio.Optional("name"): TEXT}),
        probatio.Optional("entity"): keyed(keyed(_ENTITY), keys=cv.slug),
        probatio.Optional("exceptions"): keyed({probatio.Optional("message"): TEXT}, keys=cv.slug),
        probatio.Optional("services"): keyed(_SERVICE_TEXTS),
        probatio.Optional("conditions"): keyed(_TRIGGER_TEXTS, keys=cv.underscore_slug),
        probatio.Optional("triggers"): keyed(_TRIGGER_TEXTS, keys=cv.underscore_slug),
        probatio.Optional("common"): {cv.slug: TEXT},
    }
)


# services.py: the custom-integration schema (a field may carry its own name and
# description; `filter` only where the action has a target). Never None where set.
def _present(value: Any) -> Any:
    if value is None:
        raise probatio.Invalid("value must not be empty")
    return value


# A filter names an entity attribute's option or a supported feature, by its enum name.
_FILTER = {
    probatio.Exclusive("attribute", "filter"): {
        probatio.Required(str): [probatio.All(str, service.validate_attribute_option)]
    },
    probatio.Exclusive("supported_features", "filter"): [
        probatio.All(str, service.validate_supported_feature)
    ],
}


def _field(*, targeted: bool) -> probatio.Schema:
    schema: dict[Any, Any] = {
        probatio.Optional("example"): _present,
        probatio.Optional("default"): _present,
        probatio.Optional("required"): bool,
        probatio.Optional("advanced"): bool,
        probatio.Optional("selector"): selector.validate_selector,
        probatio.Optional("name"): str,
        probatio.Optional("description"): str,
    }
    if targeted:
        schema[probatio.Optional("filter")] = _FILTER
    return probatio.Schema(schema)


def _section(*, targeted: bool) -> probatio.Schema:
    return probatio.Schema(
        {
            probatio.Optional("collapsed"): bool,
            probatio.Required("fields"): {str: _field(targeted=targeted)},
            probatio.Optional("name"): str,
            probatio.Optional("description"): str,
        }
    )


def _fields_named_once(fields: dict[str, Any]) -> dict[str, Any]:
    """services.py unique_field_validator: a field name is used once across sections."""
    names: list[str] = []
    for name, field in fields.items():
        names.extend(field["fields"] if field and "fields" in field else [name])
    if len(names) != len(set(names)):
        raise probatio.Invalid(f"a field is declared twice: {sorted(names)}")
    return fields


def _service(*, targeted: bool) -> probatio.Schema:
    schema: dict[Any, Any] = {
        probatio.Optional("fields"): probatio.All(
            {str: probatio.Any(_field(targeted=targeted), _section(targeted=targeted))},
            _fields_named_once,
        ),
        probatio.Optional("name"): str,
        probatio.Optional("description"): str,
    }
    if targeted:
        target = probatio.Any(selector.TargetSelector.CONFIG_SCHEMA, None)
        schema[probatio.Required("target")] = target
    return probatio.Schema(schema)


SERVICES_SCHEMA = probatio.Schema(
    {cv.slug: probatio.Any(_service(targeted=True), _service(targeted=False), None)}
)


def icon(value: Any) -> str:
    """icons.py icon_value_validator: a Material Design Icon, `mdi:` and its name."""
    value = cv.string_with_no_html(value)
    if not value.startswith("mdi:"):
        raise probatio.Invalid(f"{value!r} is not an mdi: icon")
    return value


def _state_icons_differ_from_default(icons: dict[str, Any]) -> dict[str, Any]:
    """icons.py ensure_not_same_as_default: a state's icon that is the default is noise."""
    for state, state_icon in icons.get("state", {}).items():
        if state_icon == icons.get("default"):
            raise probatio.Invalid(f"the icon of state {state!r} repeats the default")
    return icons


def _default_and_states(extra: dict[Any, Any]) -> Validator:
    return probatio.All(
        {
            probatio.Optional("default"): icon,
            probatio.Optional("state"): keyed(icon),
            **extra,
        },
        _state_icons_differ_from_default,
    )


_STEP_ICONS = {"step": {str: {"section": {str: icon}}}}
_ENTITY_ICONS = _default_and_states(
    {probatio.Optional("state_attributes"): keyed(_default_and_states({}))}
)

# icons.py icon_schema for an integration that is not an entity component. Service icons in
# the form with sections (home-assistant/core#124656; the bare string is the deprecated one).
ICONS_SCHEMA = probatio.Schema(
    {
        probatio.Optional("config"): _STEP_ICONS,
        probatio.Optional("options"): _STEP_ICONS,
        probatio.Optional("issues"): {str: {"fix_flow": _STEP_ICONS}},
        probatio.Optional("services"): keyed(
            {
                probatio.Optional("service"): icon,
                probatio.Optional("sections"): keyed(icon),
            }
        ),
        probatio.Optional("entity"): keyed(keyed(_ENTITY_ICONS), keys=cv.slug),
    }
)


def problems(schema: Validator, data: Any) -> str | None:
    """What `schema` finds wrong with `data`, one line per problem, or None."""
    try:
        schema(data)
    except probatio.Invalid as err:
        return probatio.humanize.humanize_error(data, err)
    return None
