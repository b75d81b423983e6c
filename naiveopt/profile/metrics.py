"""Memory metrics from an access trace: requests, sectors, compulsory sectors, bank conflicts.

A request is what one warp issues for one static access at one dynamic instance: the lanes of
warp w (linear thread id // warp size) of a block, at site s, instance i. Its cost in global
memory is the number of distinct sectors its addresses touch, of the target's ``sector_bytes``
(NVIDIA's 32-byte L1/L2 sectors: a coalesced float row read of a 32-thread warp is 4 sectors, a
column read 32, a broadcast 1). In shared memory a request takes as many wavefronts as the most
distinct bank-width words any one of the target's banks must deliver (one word read by many
lanes is a broadcast); the conflicts are the extra wavefronts. Compulsory sectors are the
distinct sectors the kernel touches at all. L2 sectors count each block's first load of a
sector once (a block's re-reads hit its SM's L1: split-reduction's groups all read the shared
vector) and every store: what a cache as large as Hopper's L1 passes on to L2.

Traces of sampled blocks are scaled up by (all blocks / sampled blocks); compulsory sectors of
an array are estimated as min(the array's size in sectors, distinct sampled sectors / sampled
fraction), which is exact both for arrays that blocks partition (each block its own rows) and
for arrays every block reads whole.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..ir.elements import WORD_BYTES
from ..targets import Target
from .instrument import RECORD_WORDS, Site


@dataclass
class SiteMetrics:
    site: Site
    requests: float
    sectors: float            # global: sectors; shared: wavefronts
    bank_conflicts: float     # shared only: extra wavefronts

    def to_json(self) -> dict:
        per = self.sectors / self.requests if self.requests else 0.0
        return {"site": self.site.number, "access": self.site.text, "space": self.site.space,
                "load": self.site.is_load, "store": self.site.is_store,
                "requests": round(self.requests), "sectors": round(self.sectors),
                "sectors_per_request": round(per, 3),
                "bank_conflicts": round(self.bank_conflicts)}


@dataclass
class Totals:
    global_load_requests: float = 0
    global_store_requests: float = 0
    global_load_sectors: float = 0
    global_store_sectors: float = 0
    compulsory_sectors: float = 0
    # what reaches L2: each block's first load of a sector (its re-reads hit its SM's L1,
    # which holds a block's working set: 256 KB on H100) and every store
    l2_sectors: float = 0
    shared_requests: float = 0
    shared_bank_conflicts: float = 0
    occupancy: float | None = None
    extra: dict = field(default_factory=dict)

    @property
    def global_sectors(self) -> float:
        return self.global_load_sectors + self.global_store_sectors

    def to_json(self) -> dict:
        return {"global_sectors": round(self.global_sectors),
                "global_load_sectors": round(self.global_load_sectors),
                "global_store_sectors": round(self.global_store_sectors),
                "global_load_requests": round(self.global_load_requests),
                "global_store_requests": round(self.global_store_requests),
                "compulsory_sectors": round(self.compulsory_sectors),
                "l2_sectors": round(self.l2_sectors),
                "shared_requests": round(self.shared_requests),
                "shared_bank_conflicts": round(self.shared_bank_conflicts),
                "occupancy": None if self.occupancy is None else round(self.occupancy, 4),
                **self.extra}


def analyse(records: np.ndarray, sites: list[Site], target: Target, scale: float,
            array_sectors: dict[str, int]) -> tuple[list[SiteMetrics], Totals]:
    """Metrics of a trace (rows of RECORD_WORDS uint32: site, block, thread, instance, index)
    under ``target``'s warp size, sector size and shared-memory banks."""
    sector_bytes = target.sector_bytes
    rec = records.reshape(-1, RECORD_WORDS).astype(np.int64)
    site, block, thread, inst, index = rec.T
    # a run's later loads are its first's 128-bit request (instrument.Site.run_leader)
    leaders = {s.number: s.run_leader for s in sites if s.run_leader is not None}
    if leaders and rec.size:
        lookup = np.arange(max(s.number for s in sites) + 1)
        for member, leader in leaders.items():
            while leader in leaders:         # a repeated read of a run's member
                leader = leaders[leader]
            lookup[member] = leader
        site = lookup[site]
    warp = thread // target.warp_size
    elem = np.array([s.elem_bytes for s in sites] or [WORD_BYTES], dtype=np.int64)[site]
    addr = index * elem
    # the last byte of a vector access (an unaligned vload4 may straddle two sectors)
    last = addr + np.array([s.width for s in sites] or [1], dtype=np.int64)[site] * elem - 1
    per_site: list[SiteMetrics] = []
    totals = Totals()
    if rec.size:
        _, request = np.unique(np.stack([site, block, warp, inst], axis=1), axis=0,
                               return_inverse=True)
        request = request.ravel()
    else:
        request = np.zeros(0, dtype=np.int64)
    for s in sites:
        mask = site == s.number
        reqs = request[mask]
        n_requests = len(np.unique(reqs)) * scale
        if s.space == "global":
            touched = np.concatenate([addr[mask], last[mask]]) // sector_bytes
            pairs = np.unique(np.stack([np.concatenate([reqs, reqs]), touched], axis=1),
                              axis=0)
            sectors, conflicts = len(pairs) * scale, 0.0
        else:
            sectors, conflicts = _wavefronts(reqs, addr[mask] // target.bank_width_bytes,
                                             target.shared_banks)
            sectors, conflicts = sectors * scale, conflicts * scale
        per_site.append(SiteMetrics(s, n_requests, sectors, conflicts))
        if s.space == "global":
            if s.is_load:
                totals.global_load_requests += n_requests
                totals.global_load_sectors += sectors
            if s.is_store:
                totals.global_store_requests += n_requests
                totals.global_store_sectors += sectors
        else:
            totals.shared_requests += n_requests
            totals.shared_bank_conflicts += conflicts
    loads = np.isin(site, [s.number for s in sites if s.space == "global" and s.is_load])
    if loads.any():
        first = np.unique(np.stack([np.concatenate([block[loads], block[loads]]), np.concatenate(
            [addr[loads], last[loads]]) // sector_bytes], axis=1), axis=0)
        totals.l2_sectors = len(first) * scale
    totals.l2_sectors += totals.global_store_sectors
    for array in sorted({s.array for s in sites if s.space == "global"}):
        numbers = [s.number for s in sites if s.array == array]
        hit = np.isin(site, numbers)
        touched = len(np.unique(np.concatenate([addr[hit], last[hit]]) // sector_bytes))
        totals.compulsory_sectors += min(array_sectors.get(array, touched * scale),
                                         touched * scale)
    return per_site, totals


def _wavefronts(requests: np.ndarray, words: np.ndarray, banks: int) -> tuple[float, float]:
    """(wavefronts, extra wavefronts) of shared-memory requests. A request of more distinct
    words than banks (a 128-bit load: 4 per lane) needs one wavefront per ``banks`` words
    however they fall; only the wavefronts beyond that are conflicts."""
    if not len(requests):
        return 0.0, 0.0
    pairs = np.unique(np.stack([requests, words], axis=1), axis=0)       # distinct words
    per_bank = np.unique(np.stack([pairs[:, 0], pairs[:, 1] % banks], axis=1), axis=0,
                         return_counts=True)
    keys, counts = per_bank
    worst = np.zeros(int(requests.max()) + 1, dtype=np.int64)
    np.maximum.at(worst, keys[:, 0], counts)
    used, distinct = np.unique(pairs[:, 0], return_counts=True)
    wavefronts = worst[used].sum()
    ideal = np.maximum(1, -(-distinct // banks)).sum()
    return float(wavefronts), float(wavefronts - ideal)
