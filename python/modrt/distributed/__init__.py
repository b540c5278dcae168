"""modrt across processes and machines: SPMD sessions of modrt workers on a
Ray cluster, with collectives (docs/DISTRIBUTED.md). Needs Ray, installed
with `pip install 'modrt[ray]'`; `import modrt` does not import this
package, and importing it does not import Ray (a Session does).

    import modrt.distributed as md
    with md.Session(devices=4) as sess:           # 4 cpu workers, a local cluster
        dmod = sess.load(modrt.compile(src, "cpu", ["vadd(float32*, float32*, float32*, int32)"]))
        a, b = sess.shard(x), sess.shard(y)
        c = sess.empty(x.shape, "float32", axis=0)
        dmod["vadd"](a, b, c, x.size // sess.size)
        print(c.numpy())
"""

from ._cluster import node_resources
from ._errors import WorkerError, WorkerInfo, WorkerTimeout
from ._handles import DFunction, DModule, DStream, DTensor, Launch
from ._session import REDUCE_OPS, Session

__all__ = [
    "REDUCE_OPS",
    "DFunction",
    "DModule",
    "DStream",
    "DTensor",
    "Launch",
    "Session",
    "WorkerError",
    "WorkerInfo",
    "WorkerTimeout",
    "node_resources",
]
