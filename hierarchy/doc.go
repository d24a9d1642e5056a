// Package hierarchy is a contraction hierarchy for road-like graphs: the
// vertex ordering and contraction, the upward and downward graphs laid out
// for sweeps, an index file, and the queries on the CPU. The GPU sweeps
// over the same arrays live in gpu/.
//
// # Algorithm
//
// Build contracts the vertices (classic CH: Geisberger, Sanders, Schultes,
// Delling, "Contraction Hierarchies: Faster and Simpler Hierarchical
// Routing in Road Networks", WEA 2008; contract.go). Removing v adds a
// shortcut u→x for every in-arc u→v and out-arc v→x unless a witness
// search finds a path u⇝x avoiding v that is no longer. Arcs are directed
// throughout, so one-way streets need no special case, and no coordinates
// are used. The order comes from a priority: edge difference + contracted
// neighbours + level. The contraction runs in rounds: each contracts, on
// every core, the vertices whose priority is below all their neighbours'
// (an independent set), each search avoiding the vertices of the set
// contracted before its own, so that the result is a serial contraction's
// and the same for any number of workers. Witness searches stop at a
// settled-vertex limit, and a search that stops adds its shortcut: the
// limits trade shortcuts for build time, never correctness.
//
// The contraction order is the rank. Every arc of the result goes from a
// lower to a higher rank (the upward graph) or from a higher to a lower
// one (the downward graph), and for every pair s, t with a path some
// shortest path climbs in rank and then descends. Both halves are CSR
// arrays over ranks: up-arcs of rank r to higher ranks, and down-arcs
// stored by their target r, with their higher-ranked tails as heads.
//
// Queries (query.go, table.go):
//   - Query.Distance: the bidirectional upward search with stall-on-demand;
//     Query.Path the same with a parent arc per vertex, the path unpacked
//     from shortcuts through the arcs of the ranks they bypass (path.go).
//   - Query.DistancesFrom, one-to-all: PHAST (Delling, Goldberg, Nowatzyk,
//     Werneck, "PHAST: Hardware-Accelerated Shortest Path Trees", IPDPS
//     2011): an upward Dijkstra from s, then one linear sweep over the
//     ranks from the top down, d(v) = min(d(v), d(u) + w(u, v)) over the
//     down-arcs into v. The sweep reads each arc once, in memory order;
//     it is the part the GPU batches over sources.
//   - Hierarchy.Table, many-to-many: the bucket algorithm of Knopp,
//     Sanders, Schultes, Schulz, Wagner, "Computing Many-to-Many Shortest
//     Paths Using Highway Hierarchies", ALENEX 2007; its target half,
//     Buckets, is built once and serves any number of sources
//     (Query.DistancesTo).
//   - Hierarchy.Reverse: the same hierarchy with its halves swapped, for
//     distances along incoming arcs.
//
// # Weights and exactness
//
// The hierarchy works on int64 weights. Integer weights (and unweighted
// graphs, every arc 1) are used as they are, and every distance equals
// Dijkstra's. Float weights are accepted only when Exact reports true:
// all multiples of one power of two 2^-f, with n·max(w)·2^f ≤ 2^53. They
// are then scaled to the integers w·2^f, and every distance is an integer
// count of units 2^-f (FractionBits; Float converts back, exactly). So
// float32 weights give exact float64 distances whenever their binary
// exponents are not too far apart (float32 weights in [0.1, 10]: up to
// about 6.7 million vertices), while arbitrary float64 weights, whose sums
// round, are refused with ErrInexact: auto then keeps the search kernels.
//
// # Complexity
//
// Build takes about O(n·s·d log d) for witness searches of s settled
// vertices in a remaining graph of degree d, spread over the workers but
// for the application of each round's shortcuts: on 2 cores about 2.5 s
// for a 256² grid and 60 s of 120 s of CPU for a 1000² grid
// (BenchmarkHierarchy). Memory is O(n·workers + m + shortcuts): each
// worker's witness workspace holds 16 bytes per vertex. A hierarchy holds
// the graph's arcs plus the shortcuts (about 1.15 per arc on road-like
// grids), each with a weight, a head and a bypassed rank.
// Read reads an index file in spans on every core (decode.go), its
// checksum combined from theirs, in O(file) work; NewSweep lays the
// device's sweep out in O(n + arcs), its arcs copied on every core.
// Distance settles the two upward search spaces (hundreds to a few
// thousand vertices on road networks); DistancesFrom costs one upward
// search and O(n + arcs) for the sweep; Table costs one upward search per
// source and per target plus the bucket scans.
//
// # Unreachable vertices and failures
//
// An unreachable vertex's distance is Infinity (math.MaxInt64) in every
// answer. Build fails for negative weights (ErrNegativeWeight), weights
// whose sums are not exact (ErrInexact) and graphs that need more shortcuts
// than Options.MaxShortcutsPerArc per arc or whose remaining core turns
// denser than Options.MaxCoreDegree allows (ErrTooManyShortcuts: R-MAT and
// social graphs have no hierarchy to find; they give up in the first
// rounds). Read fails with ErrCorrupt or ErrMismatch, NewSweep for arcs
// past int32. Queries fail only for vertices out of range or buffers of
// the wrong length. Errors are prefixed "hierarchy: ".
package hierarchy
