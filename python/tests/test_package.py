"""The installed package: where it comes from, what it ships, what help() shows."""

import pydoc
import subprocess
import sys
from pathlib import Path

import regionstore
from conftest import SOURCE_PACKAGE


def test_imported_from_the_install_not_the_source_tree():
    installed = Path(regionstore.__file__).resolve().parent
    assert installed != SOURCE_PACKAGE, (
        f"regionstore was imported from the source tree ({installed}): run the suite from the "
        "virtual environment it was installed into, from outside the repository")
    assert Path(regionstore._regionstore.__file__).resolve().parent == installed


def test_the_install_carries_the_stub_and_the_typed_marker():
    installed = Path(regionstore.__file__).resolve().parent
    for name in ("__init__.py", "_errors.py", "_regionstore.pyi", "py.typed"):
        assert (installed / name).is_file(), f"{name} missing from the installed package"


def test_version_matches_the_library():
    assert regionstore.__version__ == regionstore.version()
    assert [int(part) for part in regionstore.version().split(".")] >= [0, 13, 0]


def test_help_shows_the_documented_api():
    text = pydoc.render_doc(regionstore, renderer=pydoc.plaintext)
    for word in ("open(path", "create(path", "class Store", "commit(", "load_into(", "wait_newer(",
                 "commit_batch(", "load_set(", "mutable_view(", "begin_commit(", "sync(",
                 "start_sync(", "sync_interval", "durable_generation(", "wait_durable(",
                 "class SyncReport", "class Batch", "class Durability", "pwrite-fdatasync",
                 "class InvalidArgument"):
        assert word in text, f"help(regionstore) lacks {word!r}"
    store_text = pydoc.render_doc(regionstore.Store, renderer=pydoc.plaintext)
    assert "All-or-nothing" in store_text and "BufferError" in store_text


def test_every_public_name_has_a_docstring():
    for name in regionstore.__all__:
        obj = getattr(regionstore, name)
        if isinstance(obj, str):
            continue
        assert obj.__doc__, f"regionstore.{name} has no docstring"
    for name in dir(regionstore.Store):
        if name.startswith("_"):
            continue
        assert getattr(regionstore.Store, name).__doc__, f"Store.{name} has no docstring"


def test_the_readme_checkpoint_loop_example_runs(tmp_path):
    example = Path(__file__).resolve().parents[2] / "examples" / "python" / "checkpoint_loop.py"
    finished = subprocess.run([sys.executable, "-P", str(example), str(tmp_path / "loop.rs"), "50"],
                              capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "steps [" in finished.stdout and "50]" in finished.stdout


def test_the_readme_python_example_runs(tmp_path):
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("## From Python", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    script = tmp_path / "readme_example.py"
    script.write_text(code)
    finished = subprocess.run([sys.executable, "-P", str(script)], capture_output=True, text=True,
                              timeout=300, cwd=tmp_path)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert finished.stdout.strip().splitlines()[-1] == "checkpoint at step 100"
