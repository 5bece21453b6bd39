"""``python -m transformer_lib.train``: train a Transformer on one process, or on many with ``torchrun``.

    python -m transformer_lib.train --preset book --steps 200 --out runs/book
    torchrun --standalone --nproc_per_node 2 -m transformer_lib.train --preset book --steps 200 --out runs/book2
    python -m transformer_lib.train.launch --nproc-per-node 2 --preset book --steps 200 --out runs/book2
    torchrun --standalone --nproc_per_node 2 -m transformer_lib.train --strategy fsdp --data-src train.en \\
        --data-tgt train.de --preset base --steps 100000 --out runs/base

It reuses the library's pieces: ``training.training_step`` (the paper's label-smoothed loss, Adam
and schedule), ``tokenization``'s BPE and collation, ``checkpoint``'s atomic writer. Modules:

* ``cli``: the flags, and exit statuses (2 for bad arguments or data, 1 for a failure);
* ``data``: parallel text files, BPE, the global batches and each process's share of them;
* ``distributed``: the process group ``torchrun`` describes, DDP and FSDP2;
* ``run``: the run itself, its progress lines, checkpoints and resume.
* ``launch``: ``torchrun`` for this command, passing a usage or data error's status 2 on;
* ``stops``: a run stopped by a signal, or left alone by a killed process, said in one line.
"""

from .cli import main

__all__ = ["main"]
