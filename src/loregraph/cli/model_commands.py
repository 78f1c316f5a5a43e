"""``loregraph models prepare``."""

from __future__ import annotations

from pathlib import Path

import typer

from loregraph.cli.app import console, fail, models_app, setup


# ---- models -----------------------------------------------------------------------------------
@models_app.command("prepare")
def models_prepare(model_dir: Path = typer.Option(None, help="A local sentence-transformers model folder."),
                   no_quantize: bool = typer.Option(False, "--no-quantize", help="Keep fp32 instead of int8."),
                   check: bool = typer.Option(False, "--check", help="Only say whether the model is ready (exit 1 "
                                                                    "if not); export nothing.")) -> None:
    """Export the local embedding model to ONNX once (needs the 'export' extra: torch)."""
    setup(not check)
    from loregraph.models.embedder import prepare_model

    if check:
        from loregraph.models.model_files import DEFAULT_MODEL_NAME, existing_onnx, export_dir, resolve_model_dir

        name = str(model_dir) if model_dir else DEFAULT_MODEL_NAME
        ready = existing_onnx(export_dir(name, resolve_model_dir(name, model_dir)), not no_quantize)
        if ready is None:
            fail("the embedding model is not exported yet: run `loregraph models prepare`")
        console.print(f"model ready: {ready}")
        return

    try:
        path = prepare_model(model_dir=model_dir, quantize=not no_quantize) if model_dir else \
            prepare_model(quantize=not no_quantize)
    except Exception as exc:
        fail(str(exc))
    console.print(f"model ready: {path}")
