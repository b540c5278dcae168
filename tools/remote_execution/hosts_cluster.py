"""One BuildGrid cluster across hosts made by tools/netns_hosts: a Cluster
(cluster.py) on each host, the server's and each worker's."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cluster import Cluster
from processes import Worker, kill_tree


@dataclass
class HostsCluster:
    """One cluster across hosts (netns_hosts.Host): BuildGrid and its database
    on `server_host`, listening on its address, and one worker on each of
    `worker_hosts`, joining it (`--join`) as a worker machine would. The last
    `gpu_hosts` of the worker hosts declare the gpu property."""

    directory: Path
    server_host: Any
    worker_hosts: list[Any]
    gpu_hosts: int = 0
    gpu_value: str = "cuda"
    concurrent_jobs: int = 0
    keepalive: int = 15
    server: Cluster | None = None
    members: list[Cluster] = field(default_factory=list)

    @property
    def workers(self) -> int:
        return len(self.worker_hosts)

    @property
    def endpoint(self) -> str:
        assert self.server is not None, "the cluster has not started"
        return self.server.endpoint

    @property
    def worker_list(self) -> list[Worker]:
        return [w for member in self.members for w in member.worker_list]

    def host_of(self, worker_name: str) -> Any:
        """The host a worker runs on (None: not one of this cluster's)."""
        for member in self.members:
            if any(w.name == worker_name for w in member.worker_list):
                return member.host
        return None

    def start(self) -> HostsCluster:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.directory.chmod(0o755)
        try:
            self.server = Cluster(
                self.directory / self.server_host.name,
                workers=0,
                listen=self.server_host.address,
                host=self.server_host,
                keepalive=self.keepalive,
            )
            self.server.start()
            for i, host in enumerate(self.worker_hosts):
                member = Cluster(
                    self.directory / host.name,
                    workers=1,
                    join=self.server.endpoint,
                    host=host,
                    name_prefix=host.name,
                    gpu_workers=1 if i >= len(self.worker_hosts) - self.gpu_hosts else 0,
                    gpu_value=self.gpu_value,
                    concurrent_jobs=self.concurrent_jobs,
                )
                self.members.append(member)
                member.start()
        except BaseException:
            self.stop()
            raise
        return self

    def jobs(self, since: float = 0) -> list[tuple[str, str, int, int]]:
        assert self.server is not None, "the cluster has not started"
        return self.server.jobs(since)

    def kill_worker(self, worker: Worker) -> None:
        kill_tree(worker.proc.pid)
        worker.proc.wait()

    def stop(self) -> None:
        for member in reversed(self.members):
            member.stop()
        self.members.clear()
        if self.server is not None:
            self.server.stop()

    def __enter__(self) -> HostsCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
