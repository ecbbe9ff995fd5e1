#!/usr/bin/env python3
"""Validates regionctl --json documents against the published schemas.

    check-json-schema.py [--strict] SCHEMA_DIR VERB FILE [VERB FILE ...]

Each FILE holds one document printed by `regionctl VERB ... --json` and is
checked against SCHEMA_DIR/regionctl-VERB.schema.json (with the shared
definitions of regionctl-common.schema.json). Every schema in SCHEMA_DIR is
first checked to be a valid JSON Schema (draft 2020-12).

--strict is the test suite's mode. The published schemas let a document carry
keys they do not name, so that a reader written against them keeps working
when a key is added; --strict refuses such keys, so a key printed but not
documented fails. It also requires "schema_version" to be each document's
first key.

Prints one line per failure and exits 1 if any document failed, 2 on a usage
or schema error, 0 otherwise.
"""

import json
import pathlib
import sys

try:
    import jsonschema
except ImportError:
    print("check-json-schema: python3-jsonschema is not installed (scripts/deps.sh installs it)",
          file=sys.stderr)
    sys.exit(2)


# Subschemas that refine an object described elsewhere (the schemas use
# them for "torn is a boolean exactly when payloads were checked" and for
# verb-specific constants): they name a few of its properties, not all.
REFINEMENTS = ("if", "then", "else", "allOf")


def closed(schema, refinement=False):
    """A copy of `schema` in which every object schema that names its
    properties allows no others, refinements aside."""
    if isinstance(schema, dict):
        result = {key: closed(value, key in REFINEMENTS) for key, value in schema.items()}
        if "properties" in result and "additionalProperties" not in result and not refinement:
            result["additionalProperties"] = False
        return result
    if isinstance(schema, list):
        return [closed(value, refinement) for value in schema]
    return schema


def load_schemas(directory, strict):
    """The schemas by file name. Each must be a valid schema whose $id names
    its file: urn:regionstore:schema:NAME:VERSION for NAME.schema.json."""
    schemas = {}
    for path in sorted(pathlib.Path(directory).glob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        jsonschema.Draft202012Validator.check_schema(schema)
        name = path.name[:-len(".schema.json")]
        parts = str(schema.get("$id", "")).split(":")
        if parts[:3] != ["urn", "regionstore", "schema"] or parts[3:4] != [name]:
            raise ValueError(f"{path}: $id {schema.get('$id')!r} does not name {name}")
        schemas[path.name] = closed(schema) if strict else schema
    if not schemas:
        raise ValueError(f"no *.schema.json in {directory}")
    return schemas


def first_key(text):
    keys = []
    json.loads(text, object_pairs_hook=lambda pairs: keys.append(pairs) or dict(pairs))
    # The hook runs innermost first: the document's own object is the last.
    return keys[-1][0][0] if keys and keys[-1] else None


def main(argv):
    strict = False
    if argv and argv[0] == "--strict":
        strict = True
        argv = argv[1:]
    if len(argv) < 3 or len(argv) % 2 == 0:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        schemas = load_schemas(argv[0], strict)
    except (OSError, ValueError, jsonschema.SchemaError) as error:
        print(f"check-json-schema: {error}", file=sys.stderr)
        return 2
    store = {schema["$id"]: schema for schema in schemas.values() if "$id" in schema}
    failures = 0
    for verb, path in zip(argv[1::2], argv[2::2]):
        name = f"regionctl-{verb}.schema.json"
        if name not in schemas:
            print(f"{path}: no schema for '{verb}' ({name})")
            failures += 1
            continue
        schema = schemas[name]
        try:
            text = pathlib.Path(path).read_text(encoding="utf-8")
            document = json.loads(text)
        except (OSError, ValueError) as error:
            print(f"{path}: not a JSON document: {error}")
            failures += 1
            continue
        resolver = jsonschema.RefResolver.from_schema(schema, store=store)
        validator = jsonschema.Draft202012Validator(schema, resolver=resolver)
        try:
            errors = sorted(validator.iter_errors(document),
                            key=lambda error: [str(part) for part in error.absolute_path])
        except jsonschema.RefResolutionError as error:
            print(f"check-json-schema: {name}: {error}", file=sys.stderr)
            return 2
        for error in errors:
            where = "/".join(str(part) for part in error.absolute_path) or "(document)"
            print(f"{path}: {verb}: at {where}: {error.message}")
        failures += bool(errors)
        if strict and not errors and first_key(text) != "schema_version":
            print(f"{path}: {verb}: the first key is '{first_key(text)}', not 'schema_version'")
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
