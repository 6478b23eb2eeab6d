"""Where the project's documentation is on this machine.

The wheel ships the repository's ``docs/*.md`` (their figures stay in the repository, so
the wheel stays under 8 MB) as ``twilight_env/docs/``; an editable install (``pip install -e .``) leaves them in the
checkout's ``docs/`` folder beside ``twilight_env/``. Messages that send a user to a
document name its path from :func:`doc_path`, which exists in either case.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]
"""The ``twilight_env`` package folder."""


def docs_dir() -> Path:
    """The folder holding ``RESULTS.md``, ``API.md`` and the other documents.

    Returns:
        ``twilight_env/docs`` in an installed wheel, else the checkout's ``docs/`` (an
        editable install).

    Raises:
        FileNotFoundError: neither folder holds the documents (an install built without
            its package data); the message names both places looked in.
    """
    for folder in (_PACKAGE / "docs", _PACKAGE.parent / "docs"):
        if (folder / "RESULTS.md").is_file():
            return folder
    raise FileNotFoundError(f"the documentation is in neither {_PACKAGE / 'docs'} nor {_PACKAGE.parent / 'docs'}; "
                            "reinstall twilight-env (its wheel ships docs/*.md)")


def doc_path(name: str) -> str:
    """The path of one document, e.g. ``doc_path("RESULTS.md")``.

    Args:
        name: a file name in ``docs/`` (``"RESULTS.md"``, ``"API.md"``, ...).

    Returns:
        The document's absolute path as a string.

    Raises:
        FileNotFoundError: there is no such document; the message lists the ones there are.
    """
    folder = docs_dir()
    path = folder / name
    if not path.is_file():
        known = ", ".join(sorted(p.name for p in folder.glob("*.md")))
        raise FileNotFoundError(f"no document {name!r} in {folder}; the documents are: {known}")
    return str(path)


def doc_reference(name: str) -> str:
    """What a message prints to send the user to one document: its path from
    :func:`doc_path`, or ``docs/<name>`` (the repository's path) when this install has no
    copy of it. Never raises."""
    try:
        return doc_path(name)
    except FileNotFoundError:
        return f"docs/{name}"
