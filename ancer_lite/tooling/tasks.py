"""The job array task of a generic sharded run, in a module that imports little (submitit and `runs.shards`), so
that each task process submitit starts begins its work sooner (`launch.submit_runs`)."""
from __future__ import annotations

import submitit

from ..runs import shards


class RunShardTask(submitit.helpers.Checkpointable):
    """One job array task of a generic sharded run: `shards.run_methods(*args, shard=shard, num_shards=num_shards,
    **kwargs)` (a certify run's inputs and model travel pickled with the task). Requeued on preemption or timeout,
    it resumes from its certify.tsv."""

    def __init__(self, args: tuple, kwargs: dict, shard: int, num_shards: int) -> None:
        self.args, self.kwargs, self.shard, self.num_shards = args, kwargs, shard, num_shards

    def __call__(self) -> str:
        shards.run_methods(*self.args, shard=self.shard, num_shards=self.num_shards, **self.kwargs)
        return shards.shard_name(self.shard, self.num_shards)
