#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""report.py - turn the raw samples of a `make bench` run into figures.

    report.py RAW_DIR OUT_DIR [--vcluster-rc N] [--host-info FILE]

RAW_DIR is what tools/bench/guest.sh wrote (node 0's SDSM_OUT).  Writes
OUT_DIR/table.txt (every figure, its baseline, their ratio, the goal),
OUT_DIR/results.json (the same plus every raw sample) and
OUT_DIR/fault-latency.png (CDFs of sdsm read faults and ib_read_lat
samples, with gnuplot).  Each figure is the median over the repetitions of
a per-repetition statistic; min and max over the repetitions are shown.
A ratio divides the figure by the baseline measured in the same run.
"""

import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

MiB = 1 << 20


def pct(samples, p):
    """Nearest-rank percentile, p in (0, 100]."""
    s = sorted(samples)
    if not s:
        return None
    k = max(0, min(len(s) - 1, int(-(-p * len(s) // 100)) - 1))
    return s[k]


def summary(per_rep):
    vals = [v for v in per_rep if v is not None]
    if not vals:
        return None
    return {"median": statistics.median(vals), "min": min(vals),
            "max": max(vals), "per_rep": per_rep}


def rep_files(raw, stem, ext):
    """RAW/stem.<r>.ext sorted by r."""
    out = []
    for f in glob.glob(os.path.join(raw, "%s.*.%s" % (stem, ext))):
        m = re.match(re.escape(stem) + r"\.(\d+)\." + re.escape(ext) + "$",
                     os.path.basename(f))
        if m:
            out.append((int(m.group(1)), f))
    return [f for _, f in sorted(out)]


def read_kv(path):
    kv = {}
    try:
        with open(path) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    kv[k] = v
    except OSError:
        pass
    return kv


def read_status(raw, fig):
    try:
        with open(os.path.join(raw, "status." + fig)) as f:
            return f.read().strip() or "failed: empty status"
    except OSError:
        return "not run"


# ---- parsers ---------------------------------------------------------------

def parse_perftest_lat(path):
    """Samples in usec from `ib_read_lat -U` (lines "N, usec").  Sample 1
    includes the connection's warm-up (seconds under TCG); perftest's own
    summary leaves it out, and so do we."""
    samples = []
    with open(path) as f:
        for line in f:
            m = re.match(r"^\s*(\d+)\s*,\s*([0-9.]+(?:e[+-]?\d+)?)\s*$",
                         line)
            if m and int(m.group(1)) > 1:
                samples.append(float(m.group(2)))
    return samples


def parse_perftest_bw(path):
    """BW average of `ib_read_bw`, converted to bytes/s (perftest's MB is
    2^20 bytes)."""
    with open(path) as f:
        for line in f:
            cols = line.split()
            if len(cols) >= 4 and cols[0] == "4096" and \
                    re.match(r"^[0-9.]+$", cols[3]):
                return float(cols[3]) * MiB
    return None


def parse_fio(path, want=None):
    """One fio job's read figures; want: the bytes it must have read."""
    with open(path) as f:
        text = f.read()
    # fio may print notes before the JSON object.
    data = json.loads(text[text.index("{"):])
    job = data["jobs"][0]
    rd = job["read"]
    if job.get("error"):
        raise ValueError("fio job error %d" % job["error"])
    if want and rd.get("io_bytes") != want:
        raise ValueError("fio read %s bytes, not %d: %s" % (
            rd.get("io_bytes"), want, os.path.basename(path)))
    return {"bw_bytes": float(rd["bw_bytes"]),
            "io_bytes": rd.get("io_bytes"),
            "runtime_ms": rd.get("runtime"),
            "clat_ns_percentile": rd.get("clat_ns", {}).get("percentile")}


def parse_times(path):
    """(index, t0_ns, t1_ns) lines of sdsm_bench fault/pingpong."""
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            i, t0, t1 = line.split()
            rows.append((int(i), int(t0), int(t1)))
    return rows


# Cost counters read around the read faults (guest.sh costs), per fault:
# figure id -> (counter, title, goal).  Documentation/performance.rst,
# "What a fault costs".
COSTS = (
    ("read_fault_wakeups", "cost_wakeups",
     "read fault: sleeps of the faulting thread", 1),
    ("read_fault_copies", "cost_copies",
     "read fault: CPU copies of the payload", 0),
    ("read_fault_allocs", "cost_allocs", "read fault: allocations", 0),
    ("read_fault_msgs", "cost_msgs", "read fault: messages between nodes", 2),
    ("read_fault_local_msgs", "cost_local_msgs",
     "read fault: messages a node sends itself", None),
    ("read_fault_spare_refills", "spare_refills",
     "read fault: pages the spare pool allocated ahead", None),
    ("read_fault_spare_chunks", "spare_chunks",
     "read fault: chunks of page state allocated ahead", None),
)
META_COUNTER = "metadata_bytes_per_page"


def parse_costs(path):
    """read_fault_costs.r.txt -> ({counter: total delta over the nodes},
    metadata_bytes_per_page).  Raises ValueError naming what is missing."""
    vals = {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if len(w) != 4 or w[0] not in ("before", "after"):
                raise ValueError("bad line %r in %s" %
                                 (line.strip(), os.path.basename(path)))
            phase, node, name, v = w
            if v == "missing":
                raise ValueError("counter %s missing on node %s" %
                                 (name, node))
            vals[(phase, node, name)] = int(v)
    nodes = sorted({n for _, n, _ in vals})
    if not nodes:
        raise ValueError("no counter readings in %s" %
                         os.path.basename(path))
    need = [c for _, c, _, _ in COSTS] + ["read_faults_remote"]
    delta = {}
    for c in need:
        for n in nodes:
            for ph in ("before", "after"):
                if (ph, n, c) not in vals:
                    raise ValueError("counter %s not read %s the faults on "
                                     "node %s" % (c, ph, n))
        delta[c] = sum(vals[("after", n, c)] - vals[("before", n, c)]
                       for n in nodes)
    meta = [vals[k] for k in vals if k[2] == META_COUNTER]
    if not meta:
        raise ValueError("%s missing" % META_COUNTER)
    return delta, max(meta)


def parse_shim_run(path):
    """shim_PROG_CFG.r.txt: the program's key=value lines plus guest.sh's
    wall_seconds= and exit=."""
    kv = read_kv(path)
    if "seconds" not in kv or "checksum" not in kv:
        raise ValueError("no seconds= or checksum= in %s" %
                         os.path.basename(path))
    return {"seconds": float(kv["seconds"]), "checksum": kv["checksum"],
            "threads": int(kv.get("threads", 0) or 0),
            "wall_seconds": float(kv["wall_seconds"])
            if "wall_seconds" in kv else None}


def parse_stats(path):
    """shim_PROG_CFG.stats.txt ("before|after NODE COUNTER VALUE") ->
    {counter: {node: after - before}} for counters read both times."""
    vals = {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) != 4 or w[0] not in ("before", "after") or \
                    not w[3].isdigit():
                raise ValueError("bad line %r in %s" %
                                 (line.strip(), os.path.basename(path)))
            vals[(w[0], w[1], w[2])] = int(w[3])
    delta = {}
    for (ph, node, c), v in vals.items():
        if ph == "after" and ("before", node, c) in vals:
            delta.setdefault(c, {})[node] = v - vals[("before", node, c)]
    if not delta:
        raise ValueError("no counter read before and after in %s" %
                         os.path.basename(path))
    return delta


def parse_matmul(path):
    kv = read_kv(path)
    if "seconds" not in kv:
        return None
    return {"seconds": float(kv["seconds"]), "checksum": kv.get("checksum"),
            "verified": kv.get("verified") == "1"}


# ---- figures ---------------------------------------------------------------

# Speedup of matmul on 2 nodes over 1 (issue 11).
MATMUL_2_GOAL = 1.8
# Release consistency (issue 12): false sharing on a release region against
# a sequential one, and the Jacobi speedup of 2 nodes over 1.
FALSE_SHARING_GOAL = 5.0
JACOBI_2_GOAL = 1.8
# A fault in a 1 GiB region against one in a 1 MiB region, in a cluster of
# all the nodes against one of two (issue 11).
SCALE_GOAL = 1.1

# The shim figures: program -> (title, overhead goal, 2-node speedup goal).
SHIM_PROGS = (("matmul", "shim matmul", 1.1, 1.6),
              ("heat", "shim heat", 1.1, None))
SHIM_CFGS = (("n1", "-N 0"), ("n2", "-N 0,1"), ("n3", "-N 0,1,2"))

PP_WARMUP = 2
PAGE = 4096
# How far below the latency-implied floor a bandwidth may fall before it
# contradicts the run (see Report.check_bw).
BW_LAT_SLACK = 2.0
# The bandwidth baselines: ib_read_bw with perftest's default of as many
# outstanding reads as the device allows, and with guest.sh --bw-outs of
# them (_o), each polling and sleeping on CQ events (_ev).
BW_BASELINES = ("ib_read_bw", "ib_read_bw_ev", "ib_read_bw_o",
                "ib_read_bw_o_ev")
# A request and a reply with nothing in between, as a remote read fault's
# READ and GRANT_READ: per mode, ib_send_lat of 64 bytes and of 4 KiB
# (one send each), whose medians of a repetition add up.
SEND_PAIRS = {"send_pair": ("ib_send_lat_64", "ib_send_lat_4k"),
              "send_pair_ev": ("ib_send_lat_64_ev", "ib_send_lat_4k_ev")}


class Report:
    def __init__(self, raw):
        self.raw = raw
        self.meta = read_kv(os.path.join(raw, "meta.txt"))
        # What each fio job must read: fio_pages from the remote home,
        # fio_local_pages from tmpfs and the local home (runs before
        # fio_local_pages read every job with fio_pages).
        self.fio_bytes = {"remote": None}
        if self.meta.get("fio_pages", "").isdigit():
            self.fio_bytes["remote"] = int(self.meta["fio_pages"]) * 4096
        self.fio_bytes["local"] = self.fio_bytes["remote"]
        if self.meta.get("fio_local_pages", "").isdigit():
            self.fio_bytes["local"] = \
                int(self.meta["fio_local_pages"]) * 4096
        self.samples = {}
        self.baselines = {}
        self.figures = []
        self.errors = []

    def status(self, fig):
        return read_status(self.raw, fig)

    def load_fio(self, name, where):
        return self.load(name, name, "json", lambda f: parse_fio(
            f, self.fio_bytes[where]))

    def load(self, name, stem, ext, parser):
        st = self.status(name)
        reps = []
        if st == "ok":
            try:
                reps = [parser(f) for f in rep_files(self.raw, stem, ext)]
            except (OSError, ValueError, KeyError) as e:
                st = "failed: cannot parse samples: %s" % e
            if st == "ok" and not reps:
                st = "failed: no samples"
        return st, reps

    def load_perftest(self, name, parser):
        """Like load(), but a perftest repetition that failed (it could not
        connect, say) does not void the others: they are used and the
        baseline carries a note.  Only baselines get this leniency."""
        st = self.status(name)
        files = rep_files(self.raw, name, "txt")
        reps = []
        for f in files:
            try:
                v = parser(f)
            except (OSError, ValueError):
                v = None
            if v:
                reps.append(v)
        note = None
        if not reps:
            return (st if st != "ok" else "failed: no samples"), [], None
        want = int(self.meta.get("reps", len(files)) or len(files))
        if st != "ok" or len(reps) < want:
            note = "%d of %d repetitions (%s)" % (
                len(reps), want, st if st != "ok" else "some had no output")
        return "ok", reps, note

    # baselines
    def load_baselines(self):
        for name in ("ib_read_lat", "ib_read_lat_ev"):
            self.load_lat(name)
        for name in BW_BASELINES:
            st, reps, note = self.load_perftest(name, parse_perftest_bw)
            self.samples[name] = reps
            st, reps, note = self.check_bw(name, st, reps, note)
            self.baselines[name] = {"status": st, "unit": "bytes/s",
                                    "bw": summary(reps), "note": note}
        # The link's baseline is the fastest of the perftest modes.
        self.pick("link_lat", ("ib_read_lat", "ib_read_lat_ev"), "median",
                  min)
        self.pick("link_bw", BW_BASELINES, "bw", max)
        self.load_send_pairs()
        for mode in ("seq", "rand"):
            name = "fio_tmpfs_" + mode
            st, reps = self.load_fio(name, "local")
            self.samples[name] = reps
            self.baselines[name] = {
                "status": st, "unit": "bytes/s",
                "bw": summary([r["bw_bytes"] for r in reps])}

    def load_lat(self, name):
        """Latency baseline NAME (perftest -U samples): its median and p99
        per repetition; returns the medians."""
        st, reps, note = self.load_perftest(name, parse_perftest_lat)
        meds = [statistics.median(r) for r in reps]
        self.samples[name] = reps
        self.baselines[name] = {
            "status": st, "unit": "us", "median": summary(meds),
            "p99": summary([pct(r, 99) for r in reps]), "note": note}
        return meds

    def load_send_pairs(self):
        """Baseline link_req_rep: the faster mode's sum, per repetition,
        of the median 64-byte send and the median 4 KiB send."""
        for pair, names in SEND_PAIRS.items():
            meds = {name: self.load_lat(name) for name in names}
            bad = [self.baselines[n]["status"] for n in names
                   if self.baselines[n]["status"] != "ok"]
            sums = [a + b for a, b in zip(*(meds[n] for n in names))]
            self.baselines[pair] = {
                "status": bad[0] if bad else "ok", "unit": "us",
                "median": summary(sums) if not bad else None,
                "note": "; ".join(self.baselines[n]["note"] for n in names
                                  if self.baselines[n]["note"]) or None}
        self.pick("link_req_rep", tuple(SEND_PAIRS), "median", min)

    def check_bw(self, name, st, reps, note):
        """A bandwidth baseline must agree with the same run's latency
        baseline: one 4 KiB READ outstanding at a time already moves
        4096 B per median latency, and ib_read_bw keeps many in flight.
        A repetition below half that floor contradicts the run (perftest
        printed a broken number, or the link stalled during it): it is
        dropped and said so, and with none left the baseline fails, so no
        ratio is ever published against it."""
        lat = [self.baselines[n] for n in (
            name.replace("_o", "").replace("bw", "lat"), "ib_read_lat",
            "ib_read_lat_ev") if self.baselines[n]["status"] == "ok"]
        if st != "ok" or not lat:
            return st, reps, note
        lat_us = lat[0]["median"]["median"]
        floor = PAGE / (lat_us / 1e6) / BW_LAT_SLACK
        good = [r for r in reps if r >= floor]
        if len(good) == len(reps):
            return st, reps, note
        why = "%d of %d repetitions below %.2f MB/s, half of what the " \
            "run's ib_read_lat median of %.0f us implies" % (
                len(reps) - len(good), len(reps), floor / MiB, lat_us)
        if not good:
            return "failed: contradicts ib_read_lat: " + why, [], None
        return st, good, "; ".join(x for x in (note, why + ", dropped")
                                   if x)

    def pick(self, name, names, stat, better):
        ok = [n for n in names if self.baselines[n]["status"] == "ok"]
        if not ok:
            self.baselines[name] = dict(self.baselines[names[0]],
                                        source=None)
            return
        best = better(ok, key=lambda n: self.baselines[n][stat]["median"])
        self.baselines[name] = dict(self.baselines[best], source=best)

    def perftest_title(self, name, common=""):
        """ib_read_bw_o_ev -> "ib_read_bw<common> -o N -e": the tool, the
        options its modes share (@common), and those of this mode."""
        if name.startswith("send_pair"):
            return "ib_send_lat -s 64 + -s 4096" + \
                (" -e" if name.endswith("_ev") else "")
        tool = name.replace("_ev", "").replace("_o", "")
        if name.endswith(("_o", "_o_ev")):
            common += " -o %s" % self.meta.get("bw_outs", "?")
        return tool + common + (" -e" if name.endswith("_ev") else "")

    def base_title(self, name, stat):
        src = self.baselines[name].get("source") or name
        return "%s %s" % (self.perftest_title(src), stat)

    def base(self, name, stat):
        b = self.baselines[name]
        return b["status"], b[stat]

    def add(self, fid, title, unit, st, value, base_name, base_stat,
            base_title, goal=None, higher_better=False):
        bst, bval = self.base(base_name, base_stat) if base_name else \
            ("ok", None)
        fig = {"id": fid, "title": title, "unit": unit, "status": st,
               "value": value if st == "ok" else None,
               "baseline": {"name": base_name, "stat": base_stat,
                            "title": base_title, "status": bst,
                            "value": bval},
               "goal": goal, "ratio": None, "met": None}
        if st == "ok" and value and bst == "ok" and bval and bval["median"]:
            fig["ratio"] = value["median"] / bval["median"]
            if goal is not None:
                fig["met"] = (fig["ratio"] >= goal) if higher_better \
                    else (fig["ratio"] <= goal)
        fig["goal_text"] = None if goal is None else \
            ("%s %.2f" % (">=" if higher_better else "<=", goal))
        self.figures.append(fig)
        return fig

    def add_abs(self, fid, title, unit, st, value, goal):
        """A figure with no baseline: its value itself meets the goal
        (value <= goal) or not."""
        fig = self.add(fid, title, unit, st, value, None, None, None)
        fig["goal"] = goal
        if goal is not None:
            fig["goal_text"] = "<= %s" % fmt_val(unit, goal)
            if st == "ok" and value:
                fig["met"] = value["median"] <= goal
        return fig

    def req_rep_figs(self):
        """No goals, shown: the read fault against a request and a reply
        of perftest (what sdsm adds to its two sends), and those two sends
        against one READ (why read_fault_median's goal is the link's
        reach, not sdsm's; Documentation/performance.rst)."""
        rf = [f for f in self.figures if f["id"] == "read_fault_median"][0]
        self.add("read_fault_req_rep_median",
                 "read fault, remote home, clean median", "us",
                 rf["status"], rf["value"], "link_req_rep", "median",
                 self.base_title("link_req_rep", "median"))
        b = self.baselines["link_req_rep"]
        self.add("req_rep_median", "request and reply (perftest) median",
                 "us", b["status"], b["median"], "link_lat", "median",
                 self.base_title("link_lat", "median"))

    def cost_figs(self):
        """Per remote read fault: each cost counter's delta summed over
        every node, divided by the faults measured in that repetition."""
        st = self.status("read_fault")
        per = {fid: [] for fid, _, _, _ in COSTS}
        meta, counted = [], []
        if st == "ok":
            files = rep_files(self.raw, "read_fault_costs", "txt")
            faults = [len(r) for r in self.samples.get("read_fault", [])]
            if not files:
                st = "failed: no counter readings (read_fault_costs.*.txt)"
            elif len(files) != len(faults):
                st = "failed: counter readings for %d of %d repetitions" % (
                    len(files), len(faults))
            else:
                try:
                    for f, nf in zip(files, faults):
                        delta, m = parse_costs(f)
                        if not nf:
                            raise ValueError("no faults measured")
                        for fid, c, _, _ in COSTS:
                            per[fid].append(round(delta[c] / nf, 2))
                        meta.append(m)
                        counted.append(delta["read_faults_remote"])
                except (OSError, ValueError) as e:
                    st = "failed: %s" % e
        self.samples["read_fault_costs"] = {
            "per_fault": per, "read_faults_remote": counted,
            "status": st}
        for fid, _, title, goal in COSTS:
            self.add_abs(fid, title, "per fault", st,
                         summary(per[fid]) if st == "ok" else None, goal)
        self.add_abs(META_COUNTER, "module metadata per 4 KiB page",
                     "bytes", st, summary(meta) if st == "ok" else None, 64)

    def scale_figs(self):
        """The cost of a fault must not grow with the size of its region
        or of its cluster (issue 11, "Memory and scale"): read faults
        spread over a 1 GiB region against as many over a 1 MiB one, and
        read_fault's faults with every node in the cluster against nodes
        0 and 1 alone, each pair from the same run."""
        self.pair_fig("read_fault_1g", "read_fault_1m",
                      "read fault in a 1 GiB region median",
                      "the same in a 1 MiB region median")
        self.pair_fig("read_fault_3n", "read_fault_2n",
                      "read fault, %s nodes, median" %
                      self.meta.get("nodes", "all"),
                      "the same with 2 nodes median")

    def pair_fig(self, name, base, title, base_title):
        """Figure NAME_median against the median of BASE, goal SCALE_GOAL."""
        med = {}
        for n in (base, name):
            st, reps = self.load(n, n, "txt", parse_times)
            us = [[(t1 - t0) / 1000.0 for _, t0, t1 in r] for r in reps]
            self.samples[n] = us
            med[n] = (st, summary([statistics.median(r) for r in us])
                      if us else None)
        st, val = med[base]
        self.baselines[base] = {"status": st, "unit": "us", "median": val}
        st, val = med[name]
        self.add(name + "_median", title, "us", st, val, base, "median",
                 base_title, SCALE_GOAL)

    def latency_fig(self, name, label, goal, p99_goal=None):
        st, reps = self.load(name, name, "txt", parse_times)
        us = [[(t1 - t0) / 1000.0 for _, t0, t1 in r] for r in reps]
        self.samples[name] = us
        for stat, p, goal_here in (("median", 50, goal),
                                   ("p99", 99, p99_goal)):
            val = summary([pct(r, p) if p != 50 else statistics.median(r)
                           for r in us]) if us else None
            self.add("%s_%s" % (name, stat), "%s %s" % (label, stat), "us",
                     st, val, "link_lat", stat,
                     self.base_title("link_lat", stat), goal_here)

    def load_figures(self):
        # The goals are issue 11's table (Documentation/performance.rst).
        self.latency_fig("read_fault", "read fault, remote home, clean", 1.1,
                         2.0)
        self.req_rep_figs()
        self.cost_figs()
        self.scale_figs()
        self.latency_fig("write_fault_1", "write fault, 1 sharer", 1.5)
        self.latency_fig("write_fault_2", "write fault, 2 sharers", 2.0)

        st, reps = self.load("pingpong", "pingpong", "txt", parse_times)
        # One round trip is two hand-offs; the first rounds warm up.
        hand = [[(t1 - t0) / 2000.0 for i, t0, t1 in r if i >= PP_WARMUP]
                for r in reps]
        if st == "ok" and not all(hand):
            st, hand = "failed: too few rounds", []
        self.samples["pingpong"] = hand
        self.add("pingpong_median", "ping-pong hand-off median", "us", st,
                 summary([statistics.median(h) for h in hand]) if hand
                 else None, "link_lat", "median",
                 self.base_title("link_lat", "median"), 2.5)

        for where in ("remote", "local"):
            for mode in ("seq", "rand"):
                name = "fio_sdsm_%s_%s" % (where, mode)
                st, reps = self.load_fio(name, where)
                self.samples[name] = reps
                val = summary([r["bw_bytes"] for r in reps]) if reps \
                    else None
                if where == "remote":
                    self.add(name, "fio mmap %s 4k reads, remote home" %
                             ("sequential" if mode == "seq" else "random"),
                             "bytes/s", st, val, "link_bw", "bw",
                             self.base_title("link_bw", "4k"),
                             1.5 if mode == "seq" else 0.8,
                             higher_better=True)
                else:
                    self.add(name, "fio mmap %s 4k reads, local home" %
                             ("sequential" if mode == "seq" else "random"),
                             "bytes/s", st, val, "fio_tmpfs_" + mode, "bw",
                             "same fio job on tmpfs", 0.95,
                             higher_better=True)

        st = self.status("matmul")
        one = [parse_matmul(f) for f in rep_files(self.raw, "matmul_1", "txt")]
        two = [parse_matmul(f) for f in rep_files(self.raw, "matmul_2", "txt")]
        if st == "ok" and (not one or len(one) != len(two) or
                           None in one or None in two):
            st = "failed: missing matmul timings"
        if st == "ok" and not all(r["verified"] for r in one + two):
            st = "failed: a result was not verified"
        if st == "ok" and len({r["checksum"] for r in one + two}) != 1:
            st = "failed: checksums differ between runs"
        self.samples["matmul"] = {"one_node": one, "two_nodes": two}
        ok = st == "ok"
        t1 = summary([r["seconds"] for r in one]) if ok else None
        t2 = summary([r["seconds"] for r in two]) if ok else None
        sp = summary([a["seconds"] / b["seconds"]
                      for a, b in zip(one, two)]) if ok else None
        n = self.meta.get("mm_n", "?")
        self.baselines["matmul_1"] = {"status": st, "unit": "s", "time": t1}
        fig = self.add("matmul_2", "matmul %sx%s on 2 nodes" % (n, n), "s",
                       st, t2, "matmul_1", "time",
                       "same matmul on 1 node")
        # For time, the ratio 1-node/2-node is the speedup.
        fig["speedup"] = sp
        fig["goal"] = MATMUL_2_GOAL
        fig["goal_text"] = ">= %.2f" % MATMUL_2_GOAL
        if fig["ratio"]:
            fig["ratio"] = 1.0 / fig["ratio"]
            fig["ratio_meaning"] = "speedup (1-node time / 2-node time)"
            fig["met"] = fig["ratio"] >= MATMUL_2_GOAL

        for prog, title, ov_goal, sp_goal in SHIM_PROGS:
            self.shim_figs(prog, title, ov_goal, sp_goal)

        pg, k, ph = (self.meta.get("fs", "") + "x?x?x?").split("x")[:3]
        self.time_ratio_fig(
            "false_sharing", "false_sharing_release", "false_sharing_seq",
            "false_sharing", "false sharing, %s pages, %s nodes, release" %
            (pg, self.meta.get("nodes", "?")),
            "the same on a sequential region",
            "release speedup (sequential time / release time)",
            FALSE_SHARING_GOAL, "sequential", "release",
            "%s pages, %s steps of each word x %s phases" % (pg, k, ph))
        n, it = (self.meta.get("jacobi", "") + "x?x?").split("x")[:2]
        self.time_ratio_fig(
            "jacobi", "jacobi_2", "jacobi_1", "jacobi_2",
            "jacobi %sx%s, %s iterations, 2 nodes" % (n, n, it),
            "same jacobi on 1 node",
            "speedup (1-node time / 2-node time)", JACOBI_2_GOAL,
            "1 node", "2 nodes", "%sx%s doubles, %s iterations" % (n, n, it))

    def time_ratio_fig(self, part, stem, base_stem, fid, title, base_title,
                       meaning, goal, base_label, label, size):
        """A figure of two timed runs of the same computation in each
        repetition of PART: its value is STEM's time, its baseline
        BASE_STEM's, and its ratio base time / time (a speedup), judged
        against GOAL.  Every run must be verified and give one checksum.
        The counters around repetition 1 (STEM.stats.txt) are kept."""
        st = self.status(part)
        base = [parse_matmul(f) for f in rep_files(self.raw, base_stem,
                                                   "txt")]
        runs = [parse_matmul(f) for f in rep_files(self.raw, stem, "txt")]
        if st == "ok" and (not base or len(base) != len(runs) or
                           None in base or None in runs):
            st = "failed: missing timings"
        if st == "ok" and not all(r["verified"] for r in base + runs):
            st = "failed: a result was not verified"
        if st == "ok" and len({r["checksum"] for r in base + runs}) != 1:
            st = "failed: checksums differ between runs"
        ok = st == "ok"
        counters = {}
        for cfg in (base_stem, stem):
            sf = os.path.join(self.raw, cfg + ".stats.txt")
            if os.path.exists(sf):
                try:
                    counters[cfg] = parse_stats(sf)
                except (OSError, ValueError) as e:
                    counters[cfg] = {"error": str(e)}
        self.samples[part] = {
            "size": size, "labels": {base_stem: base_label, stem: label},
            base_stem: base, stem: runs,
            "counters": counters}
        self.baselines[base_stem] = {
            "status": st, "unit": "s",
            "time": summary([r["seconds"] for r in base]) if ok else None}
        fig = self.add(fid, title, "s", st,
                       summary([r["seconds"] for r in runs]) if ok else None,
                       base_stem, "time", base_title)
        fig["speedup"] = summary([a["seconds"] / b["seconds"]
                                  for a, b in zip(base, runs)]) if ok \
            else None
        fig["goal"] = goal
        fig["goal_text"] = ">= %.2f" % goal
        if fig["ratio"]:
            fig["ratio"] = 1.0 / fig["ratio"]
            fig["ratio_meaning"] = meaning
            fig["met"] = fig["ratio"] >= goal

    def shim_runs(self, prog, cfg, ref):
        """Status and parsed repetitions of one configuration; a checksum
        other than the --serial reference fails it."""
        name = "shim_%s_%s" % (prog, cfg)
        st, reps = self.load(name, name, "txt", parse_shim_run)
        if st == "ok" and ref is None:
            st = "failed: no checksum of the --serial reference run"
        if st == "ok":
            bad = [(i + 1, r["checksum"]) for i, r in enumerate(reps)
                   if r["checksum"] != ref]
            if bad:
                st = "failed: checksum differs from the serial reference " \
                    "%s (rep %d: %s)" % (ref, bad[0][0], bad[0][1])
        return st, reps if st == "ok" else []

    def shim_figs(self, prog, title, ov_goal, sp_goal):
        ref = read_kv(os.path.join(self.raw, "shim_%s_serial.txt" %
                                   prog)).get("checksum")
        if prog == "matmul":
            size = "%s x %s" % ((self.meta.get("shim_mm_n", "?"),) * 2)
        else:
            size = "%s rows x %s cols, %s sweeps" % tuple(
                (self.meta.get("shim_heat", "") + "x?x?x?").split("x")[:3])
        nst, native = self.shim_runs(prog, "native", ref)
        base = "shim_%s_native" % prog
        self.baselines[base] = {
            "status": nst, "unit": "s",
            "time": summary([r["seconds"] for r in native]) if native
            else None}
        data = {"serial_checksum": ref, "native": native, "size": size}
        for cfg, opt in SHIM_CFGS:
            st, reps = self.shim_runs(prog, cfg, ref)
            data[cfg] = reps
            counters = None
            sf = os.path.join(self.raw, "shim_%s_%s.stats.txt" % (prog, cfg))
            if os.path.exists(sf):
                try:
                    counters = parse_stats(sf)
                except (OSError, ValueError) as e:
                    counters = {"error": str(e)}
            data[cfg + "_counters"] = counters
            val = summary([r["seconds"] for r in reps]) if reps else None
            if cfg == "n1":
                fig = self.add("shim_%s_overhead" % prog,
                               "%s, 1 node (%s)" % (title, opt), "s",
                               st, val, base, "time",
                               "%s natively on node 0 (no shim)" % size,
                               ov_goal)
                fig["ratio_meaning"] = "overhead (shim time / native time)"
                continue
            fid = "shim_%s_%s" % (prog, cfg[1])
            fig = self.add(fid, "%s, %s nodes (%s)" % (
                title, cfg[1], opt), "s", st, val, base, "time",
                "%s natively on node 0 (no shim)" % size)
            # For a time, native / shim is the speedup.
            if fig["ratio"]:
                fig["ratio"] = 1.0 / fig["ratio"]
                fig["ratio_meaning"] = "speedup (native time / shim time)"
            if reps and native:
                fig["speedup"] = summary([a["seconds"] / b["seconds"]
                                          for a, b in zip(native, reps)])
            if cfg == "n2" and sp_goal is not None:
                fig["goal"] = sp_goal
                fig["goal_text"] = ">= %.2f" % sp_goal
                if fig["ratio"] is not None:
                    fig["met"] = fig["ratio"] >= sp_goal
        self.samples["shim_" + prog] = data

    # output
    def to_json(self, extra):
        return {"meta": self.meta, "run": extra,
                "baselines": self.baselines, "figures": self.figures,
                "samples": self.samples}


def fmt_val(unit, v):
    if v is None:
        return "-"
    if unit == "bytes/s":
        return "%.2f MB/s" % (v / 1e6)
    if unit == "s":
        return "%.3f s" % v
    if unit == "per fault":
        return "%.2f" % v
    if unit == "bytes":
        return "%d B" % v
    return "%.0f us" % v if v >= 100 else "%.1f us" % v


def fmt_sum(unit, s):
    if not s:
        return "-"
    return "%s [%s..%s]" % (fmt_val(unit, s["median"]),
                            fmt_val(unit, s["min"]).split()[0],
                            fmt_val(unit, s["max"]).split()[0])


def table(rep, extra):
    m = rep.meta
    lines = []
    lines.append("sdsm bench  %s  %s node(s), TCG guests, kernel %s" %
                 (m.get("date", "?"), m.get("nodes", "?"),
                  m.get("kernel", "?")))
    lines.append("repetitions %s; each value: median of the per-repetition "
                 "statistic [min..max]" % m.get("reps", "?"))
    lines.append("module features: %s" % (m.get("features") or "none"))
    if extra.get("vcluster_rc") not in (None, 0):
        lines.append("WARNING: vcluster exited %s (see the vcluster "
                     "output dir)" % extra["vcluster_rc"])
    lines.append("")
    lines.append("Baselines (same run, same link)")
    bl = rep.baselines
    rows = [("ib_read_lat -R -s 4096 median", bl["ib_read_lat"], "median"),
            ("ib_read_lat -R -s 4096 p99", bl["ib_read_lat"], "p99"),
            ("ib_read_lat -R -s 4096 -e median", bl["ib_read_lat_ev"],
             "median"),
            ("ib_read_lat -R -s 4096 -e p99", bl["ib_read_lat_ev"], "p99"),
            ("ib_read_bw -R -s 4096", bl["ib_read_bw"], "bw"),
            ("ib_read_bw -R -s 4096 -e", bl["ib_read_bw_ev"], "bw"),
            (rep.perftest_title("ib_read_bw_o", " -R -s 4096"),
             bl["ib_read_bw_o"], "bw"),
            (rep.perftest_title("ib_read_bw_o_ev", " -R -s 4096"),
             bl["ib_read_bw_o_ev"], "bw"),
            ("ib_send_lat -R -s 64 median", bl["ib_send_lat_64"], "median"),
            ("ib_send_lat -R -s 64 -e median", bl["ib_send_lat_64_ev"],
             "median"),
            ("ib_send_lat -R -s 4096 median", bl["ib_send_lat_4k"],
             "median"),
            ("ib_send_lat -R -s 4096 -e median", bl["ib_send_lat_4k_ev"],
             "median"),
            ("request + reply (64 + 4096) median", bl["send_pair"],
             "median"),
            ("request + reply -e median", bl["send_pair_ev"], "median"),
            ("fio mmap seq 4k on tmpfs", bl["fio_tmpfs_seq"], "bw"),
            ("fio mmap rand 4k on tmpfs", bl["fio_tmpfs_rand"], "bw")]
    for title, b, stat in rows:
        val = fmt_sum(b["unit"], b[stat]) if b["status"] == "ok" \
            else b["status"]
        if b.get("note"):
            val += "  [%s]" % b["note"]
        lines.append("  %-34s %s" % (title, val))
    lines.append("  link baseline (the fastest perftest mode): latency %s, "
                 "bandwidth %s, request and reply %s" % tuple(
                     rep.perftest_title(bl[k].get("source") or "none")
                     for k in ("link_lat", "link_bw", "link_req_rep")))
    lines.append("")
    hdr = "%-42s %-28s %-30s %-7s %-8s %s" % (
        "figure", "sdsm", "baseline", "ratio", "goal", "met")
    lines.append(hdr)
    lines.append("-" * len(hdr))
    for f in rep.figures:
        if f["status"] != "ok":
            val = f["status"]
            lines.append("%-42s %s" % (f["title"], val))
            continue
        b = f["baseline"]
        bval = fmt_sum(f["unit"], b["value"]) if b["status"] == "ok" \
            else "baseline " + b["status"]
        ratio = "%.2f" % f["ratio"] if f["ratio"] is not None else "-"
        met = "-" if f["met"] is None else ("yes" if f["met"] else "NO")
        lines.append("%-42s %-28s %-30s %-7s %-8s %s" % (
            f["title"], fmt_sum(f["unit"], f["value"]), bval, ratio,
            f["goal_text"] or "-", met))
        if b["name"]:
            lines.append("%-42s vs %s" % ("", b["title"]))
        if f.get("ratio_meaning"):
            lines.append("%-42s ratio = %s" % ("", f["ratio_meaning"]))
    return "\n".join(lines) + "\n"


def shim_counter_rows(counters_by_cfg):
    """[(counter, {cfg: "total (node0/node1/...)"})] of the counters that
    moved; per-peer files (tx_msgs.K) are summed into one row."""
    agg = {}
    for cfg, cnt in counters_by_cfg.items():
        if not cnt or "error" in cnt:
            continue
        for c, per_node in cnt.items():
            name = c.split(".")[0]
            row = agg.setdefault(name, {}).setdefault(cfg, {})
            for node, v in per_node.items():
                row[node] = row.get(node, 0) + v
    rows = []
    for name in sorted(agg, key=lambda n: (n.startswith(("tx_", "cost_")),
                                           n)):
        cells = {}
        for cfg, per_node in agg[name].items():
            nodes = sorted(per_node, key=int)
            cells[cfg] = "%d (%s)" % (sum(per_node.values()), "/".join(
                str(per_node[n]) for n in nodes))
        if any(not c.startswith("0 ") for c in cells.values()):
            rows.append((name, cells))
    return rows


def shim_text(rep):
    lines = []
    for prog, title, _, _ in SHIM_PROGS:
        d = rep.samples.get("shim_" + prog)
        if not d or not any(d.get(c) for c in ("native", "n1", "n2", "n3")):
            continue
        if not lines:
            lines += ["", "Shim runs (sdsmctl -N): where the time goes; "
                      "medians over the repetitions"]
        cfgs = [("native", "native")] + list(SHIM_CFGS)
        lines.append("  %s, %s" % (title, d["size"]))
        rows = []

        def row(label, fn):
            cells = []
            for cfg, _ in cfgs:
                reps = d.get(cfg) or []
                v = fn(reps) if reps else None
                cells.append("-" if v is None else v)
            rows.append((label, cells))
        rows.append(("", [o for _, o in cfgs]))
        row("threads", lambda r: "%d" % r[0]["threads"])
        row("compute (s)", lambda r: "%.3f" % statistics.median(
            x["seconds"] for x in r))
        row("whole command (s)", lambda r: "%.3f" % statistics.median(
            x["wall_seconds"] for x in r) if all(
                x["wall_seconds"] is not None for x in r) else None)
        row("command - compute (s)", lambda r: "%.3f" % statistics.median(
            x["wall_seconds"] - x["seconds"] for x in r) if all(
                x["wall_seconds"] is not None for x in r) else None)
        cnt = {cfg: d.get(cfg + "_counters") for cfg, _ in SHIM_CFGS}
        errs = ["%s: %s" % (c, v["error"]) for c, v in cnt.items()
                if v and "error" in v]
        crows = [(name, [""] + [cells.get(cfg, "-") for cfg, _ in SHIM_CFGS])
                 for name, cells in shim_counter_rows(cnt)]
        width = [max(len(r[1][i]) for r in rows + crows) + 2
                 for i in range(len(cfgs))]

        def fmt(label, cells):
            return ("    %-24s" % label + "".join(
                c.ljust(w) for c, w in zip(cells, width))).rstrip()
        lines += [fmt(label, cells) for label, cells in rows]
        if crows:
            lines.append("    counters over the whole job of repetition 1, "
                         "total (node 0/1/2):")
            lines += [fmt(label, cells) for label, cells in crows]
        for e in errs:
            lines.append("    counters %s" % e)
    return "\n".join(lines) + ("\n" if lines else "")


def rc_text(rep):
    """The counters that moved around repetition 1 of each run of the
    release-consistency figures."""
    lines = []
    for part, title in (("false_sharing", "false sharing"),
                        ("jacobi", "jacobi")):
        d = rep.samples.get(part)
        if not d or not d.get("counters"):
            continue
        if not lines:
            lines += ["", "Release consistency runs: counters over the run "
                      "of repetition 1, total (node 0/1/...)"]
        cfgs = [c for c in d["labels"] if c in d["counters"]]
        errs = ["%s: %s" % (c, d["counters"][c]["error"]) for c in cfgs
                if "error" in d["counters"][c]]
        crows = shim_counter_rows({c: d["counters"][c] for c in cfgs})
        heads = [d["labels"][c] for c in cfgs]
        width = [max([len(h)] + [len(cells.get(c, "-"))
                                 for _, cells in crows]) + 2
                 for h, c in zip(heads, cfgs)]

        def fmt(label, cells):
            return ("    %-24s" % label + "".join(
                c.ljust(w) for c, w in zip(cells, width))).rstrip()
        lines.append("  %s, %s" % (title, d["size"]))
        lines.append(fmt("", heads))
        for name, cells in crows:
            lines.append(fmt(name, [cells.get(c, "-") for c in cfgs]))
        if not crows and not errs:
            lines.append("    (no counter moved)")
        for e in errs:
            lines.append("    counters %s" % e)
    return "\n".join(lines) + ("\n" if lines else "")


def cdf_file(path, samples):
    s = sorted(samples)
    with open(path, "w") as f:
        for i, v in enumerate(s):
            f.write("%g %g\n" % (v, (i + 1) / len(s)))


def plot(rep, out):
    """CDFs of sdsm read-fault latency and ib_read_lat samples."""
    gp = shutil.which("gnuplot")
    if not gp:
        return "gnuplot not found; no plot"
    rf = [v for r in rep.samples.get("read_fault", []) for v in r]
    series = []
    for name, title in (("ib_read_lat", "ib\\_read\\_lat -s 4096"),
                        ("ib_read_lat_ev", "ib\\_read\\_lat -s 4096 -e")):
        ib = [v for r in rep.samples.get(name, []) for v in r]
        if not ib:
            continue
        cdf_file(os.path.join(out, "cdf-%s.dat" % name), ib)
        series.append("'cdf-%s.dat' using 1:2 with lines lw 2 "
                      "title '%s (%d samples)'" % (name, title, len(ib)))
    if rf:
        cdf_file(os.path.join(out, "cdf-read_fault.dat"), rf)
        series.append("'cdf-read_fault.dat' using 1:2 with lines lw 2 "
                      "title 'sdsm read fault, remote home (%d faults)'"
                      % len(rf))
    if not series:
        return "no latency samples; no plot"
    note = "" if rf else \
        "set label 1 'sdsm read faults: %s' at graph 0.02, graph 0.95\n" % \
        rep.status("read_fault").replace("'", "")
    script = ("set terminal png size 900,560\n"
              "set output 'fault-latency.png'\n"
              "set title 'Read latency of one 4 KiB page between two TCG "
              "guests (CDF)'\n"
              "set xlabel 'latency (us, log scale)'\n"
              "set ylabel 'fraction of samples'\n"
              "set logscale x\nset grid\nset key bottom right\n"
              "set yrange [0:1]\n" + note +
              "plot " + ", ".join(series) + "\n")
    with open(os.path.join(out, "fault-latency.gp"), "w") as f:
        f.write(script)
    r = subprocess.run([gp, "fault-latency.gp"], cwd=out,
                       capture_output=True, text=True)
    if r.returncode:
        return "gnuplot failed: " + r.stderr.strip()
    return None


# ---- profile ---------------------------------------------------------------

TRACE_RE = re.compile(r"^\s*(.+?)-(\d+)\s+\[\d+\]\s+\S+\s+([0-9.]+):\s+"
                      r"(\w+):\s*(.*)$")


def parse_trace(path):
    ev = []
    try:
        with open(path) as f:
            for line in f:
                m = TRACE_RE.match(line)
                if not m:
                    continue
                ts = int(round(float(m.group(3)) * 1e9))
                args = dict(re.findall(r"(\w+)=(\S+)", m.group(5)))
                args["_label"] = ev_label(m.group(4), args, m.group(5))
                ev.append((ts, m.group(4), args))
    except OSError:
        return None
    ev.sort(key=lambda e: e[0])
    return ev


def ev_label(name, args, rest):
    """A short label: message events by type (and whether they carry a
    page), coherence events by their message name."""
    label = name.replace("sdsm_", "")
    if name.startswith("sdsm_coh_"):
        words = [w for w in rest.split() if "=" not in w]
        label += "(%s%s)" % (words[0] if words else "?",
                             ",data" if args.get("data") == "1" else "")
    elif "type" in args:
        label += "(type=%s%s)" % (args["type"],
                                  ",page" if args.get("page") == "1" else "")
    return label


def profile(raw):
    """Break the traced read faults down by the tracepoints between the
    user-space timestamps (trace_clock=mono == CLOCK_MONOTONIC)."""
    pdir = os.path.join(raw, "profile")
    if not os.path.isdir(pdir):
        return None
    res = {"status": read_status(raw, "profile")}
    try:
        faults = parse_times(os.path.join(pdir, "read_fault.txt"))
    except OSError:
        res["status"] = "failed: no traced fault samples"
        return res
    ev0 = parse_trace(os.path.join(pdir, "trace.node0")) or []
    ev1 = parse_trace(os.path.join(pdir, "trace.node1")) or []
    res["faults"] = len(faults)
    res["events_node0"] = len(ev0)
    res["events_node1"] = len(ev1)
    # Node 0: the sequence of events inside each fault window.
    seqs = {}
    j = 0
    for _, t0, t1 in faults:
        while j < len(ev0) and ev0[j][0] < t0:
            j += 1
        k = j
        inside = []
        while k < len(ev0) and ev0[k][0] <= t1:
            inside.append(ev0[k])
            k += 1
        key = tuple(a["_label"] for _, n, a in inside)
        stamps = [t0] + [t for t, _, _ in inside] + [t1]
        gaps = [(b - a) / 1000.0 for a, b in zip(stamps, stamps[1:])]
        seqs.setdefault(key, []).append(gaps)
    if not seqs:
        res["status"] = "failed: no faults"
        return res
    # The steps.  Protocol (coh_*) events are preferred to
    # transport (msg_*) ones when the module has both.
    coh = any(n.startswith("sdsm_coh_") for _, n, _ in ev0)
    kind = "sdsm_coh_" if coh else "sdsm_msg_"
    per = {"trap": [], "request": [], "wire": [], "mapping": [],
           "return": [], "kernel": []}
    j = 0
    for _, t0, t1 in faults:
        while j < len(ev0) and ev0[j][0] < t0:
            j += 1
        inside = []
        k = j
        while k < len(ev0) and ev0[k][0] <= t1:
            inside.append(ev0[k])
            k += 1
        sends = [t for t, n, _ in inside if n == kind + "send"]
        recvs = [t for t, n, _ in inside if n == kind + "recv"]
        begin = [t for t, n, _ in inside if n == "sdsm_fault_begin"]
        end = [(t, a) for t, n, a in inside if n == "sdsm_fault_end"]
        if not sends or not recvs or recvs[-1] < sends[0]:
            continue
        start = begin[0] if begin else t0
        stop = end[-1][0] if end else t1
        if begin:
            per["trap"].append((begin[0] - t0) / 1000.0)
        per["request"].append((sends[0] - start) / 1000.0)
        per["wire"].append((recvs[-1] - sends[0]) / 1000.0)
        per["mapping"].append((stop - recvs[-1]) / 1000.0)
        if end:
            per["return"].append((t1 - end[-1][0]) / 1000.0)
            if "latency_ns" in end[-1][1]:
                per["kernel"].append(int(end[-1][1]["latency_ns"]) / 1000.0)
    key, rows = max(seqs.items(), key=lambda kv: len(kv[1]))
    names = ["fault start (user)"] + list(key) + ["fault end (user)"]
    steps = []
    for i in range(len(names) - 1):
        steps.append({"from": names[i], "to": names[i + 1],
                      "median_us": statistics.median(r[i] for r in rows)})
    res["node0_sequence"] = {"faults_with_this_sequence": len(rows),
                             "of": len(faults), "steps": steps}
    # Node 1 (the home): from each received message to the next message it
    # sends back to node 0: the home's processing time.
    coh1 = any(n.startswith("sdsm_coh_") for _, n, _ in ev1)
    kind1 = "sdsm_coh_" if coh1 else "sdsm_msg_"
    home = {}
    for i, (t, n, a) in enumerate(ev1):
        if n != kind1 + "recv" or a.get("node") != "0":
            continue
        for t2, n2, a2 in ev1[i + 1:i + 50]:
            if n2 == kind1 + "send" and a2.get("node") == "0":
                home.setdefault("%s -> %s" % (a["_label"], a2["_label"]),
                                []).append((t2 - t) / 1000.0)
                break
    res["home_processing"] = [{"pair": k, "count": len(v),
                               "median_us": statistics.median(v)}
                              for k, v in sorted(home.items(),
                                                 key=lambda kv: -len(kv[1]))]
    if per["request"]:
        med = {k: (statistics.median(v) if v else None)
               for k, v in per.items()}
        total = statistics.median((t1 - t0) / 1000.0 for _, t0, t1 in faults)
        # Prefer the pair whose reply carries a page (not a heartbeat).
        pairs = sorted(res["home_processing"],
                       key=lambda h: (not (",page" in h["pair"] or
                                           ",data" in h["pair"]),
                                      -h["count"]))
        hp = pairs[0]["median_us"] if pairs else None
        res["steps"] = {
            "faults": len(per["request"]), "events": kind.rstrip("_"),
            "total_median_us": total,
            "kernel_fault_median_us": med["kernel"],
            "trap_us": med["trap"],
            "request_us": med["request"],
            "request_to_reply_us": med["wire"],
            "home_processing_us": hp,
            "transfer_us": (med["wire"] - hp) if hp is not None else None,
            "mapping_us": med["mapping"],
            "return_us": med["return"]}
    return res


def profile_text(p):
    if not p:
        return ""
    lines = ["", "Profile of the read-fault path (--profile; one traced "
             "repetition, tracepoints on)"]
    if p["status"] != "ok" or "node0_sequence" not in p:
        lines.append("  " + p["status"])
        return "\n".join(lines) + "\n"
    st = p.get("steps")
    if st:
        lines.append("  per step, medians over %d faults (user-timed total "
                     "%.1f us%s):" % (
                         st["faults"], st["total_median_us"],
                         "; in-kernel %.1f us" % st["kernel_fault_median_us"]
                         if st["kernel_fault_median_us"] is not None else ""))

        def row(name, v):
            if v is not None:
                lines.append("    %-48s %9.1f us" % (name, v))
        row("trap (load -> fault_begin)", st["trap_us"])
        row("request (-> first %s send)" % st["events"], st["request_us"])
        row("request sent -> reply received", st["request_to_reply_us"])
        row("  of which home processing (node 1)", st["home_processing_us"])
        row("  of which transfer, both ways", st["transfer_us"])
        row("mapping (reply -> fault_end)" if st["return_us"] is not None
            else "mapping + return (reply -> load done)", st["mapping_us"])
        row("return to user (fault_end -> load done)", st["return_us"])
    s = p["node0_sequence"]
    lines.append("  node 0 (faulting), %d of %d faults had this event "
                 "sequence; median per step:" % (
                     s["faults_with_this_sequence"], s["of"]))
    for st in s["steps"]:
        lines.append("    %-36s -> %-36s %9.1f us" % (st["from"], st["to"],
                                                       st["median_us"]))
    lines.append("  node 1 (home), received -> next sent to node 0:")
    if not p["home_processing"]:
        lines.append("    (no request/reply pairs in the home's trace)")
    for h in p["home_processing"][:6]:
        lines.append("    %-60s %6d x %9.1f us" % (h["pair"], h["count"],
                                                   h["median_us"]))
    return "\n".join(lines) + "\n"


def main(argv):
    args = argv[1:]
    extra = {}
    pos = []
    while args:
        a = args.pop(0)
        if a == "--vcluster-rc":
            extra["vcluster_rc"] = int(args.pop(0))
        elif a == "--host-info":
            extra["host"] = read_kv(args.pop(0))
        else:
            pos.append(a)
    if len(pos) != 2:
        sys.stderr.write(__doc__)
        return 2
    raw, out = pos
    os.makedirs(out, exist_ok=True)
    rep = Report(raw)
    rep.load_baselines()
    rep.load_figures()
    prof = profile(raw)
    text = table(rep, extra) + shim_text(rep) + rc_text(rep) + \
        profile_text(prof)
    perr = plot(rep, out)
    if perr:
        text += "\nplot: %s\n" % perr
    data = rep.to_json(extra)
    data["profile"] = prof
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
