package graph

// Stats holds the per-source reductions of the stats layout (design.md,
// "Outputs"), over the set R of vertices other than the source that the
// source reaches.
type Stats struct {
	Sources []VertexID
	Type    DistType // type of the distances reduced
	// Reachable is |R|.
	Reachable []int64
	// Eccentricity is max d(s,v) over R, as float64 (exact for every
	// distance type's reachable range below 2^53); meaningful only where
	// Reachable > 0 (null in the output otherwise).
	Eccentricity []float64
	// Sum is Σ d(s,v) over R: exact in SumInt for integer types, in
	// SumFloat (float64) for float types.
	SumInt   []int64
	SumFloat []float64
	// Closeness is (|R|/sum)·(|R|/(n−1)), 0 when R is empty or sum is 0.
	Closeness []float64
	// Harmonic is Σ 1/d(s,v), with 1/0 counted as 0.
	Harmonic []float64
}

// NewStats allocates Stats for sources.
func NewStats(sources []VertexID, t DistType) *Stats {
	k := len(sources)
	s := &Stats{
		Sources: sources, Type: t,
		Reachable: make([]int64, k), Eccentricity: make([]float64, k),
		Closeness: make([]float64, k), Harmonic: make([]float64, k),
	}
	if t.IsFloat() {
		s.SumFloat = make([]float64, k)
	} else {
		s.SumInt = make([]int64, k)
	}
	return s
}

// Slice is the stats of s's sources [lo, hi), sharing s's memory.
func (s *Stats) Slice(lo, hi int) *Stats {
	out := &Stats{Sources: s.Sources[lo:hi], Type: s.Type,
		Reachable: s.Reachable[lo:hi], Eccentricity: s.Eccentricity[lo:hi],
		Closeness: s.Closeness[lo:hi], Harmonic: s.Harmonic[lo:hi]}
	if s.Type.IsFloat() {
		out.SumFloat = s.SumFloat[lo:hi]
	} else {
		out.SumInt = s.SumInt[lo:hi]
	}
	return out
}

// SetRow sets row j of s to row i of from, of the same distance type.
func (s *Stats) SetRow(j int, from *Stats, i int) {
	s.Reachable[j], s.Eccentricity[j] = from.Reachable[i], from.Eccentricity[i]
	s.Closeness[j], s.Harmonic[j] = from.Closeness[i], from.Harmonic[i]
	if s.Type.IsFloat() {
		s.SumFloat[j] = from.SumFloat[i]
	} else {
		s.SumInt[j] = from.SumInt[i]
	}
}

// ComputeStats reduces every row of b into a new Stats, rows spread over
// every core (ComputeStatsThreads with threads 0). A block of some
// targets' columns (Block.Targets) is reduced over the targets other than
// the source that it reaches, and closeness divides by the number of
// those targets instead of n − 1.
func ComputeStats(b *Block) *Stats { return ComputeStatsThreads(b, 0) }

// ComputeStatsThreads is ComputeStats on up to threads goroutines
// (threads ≤ 0: runtime.GOMAXPROCS), chunks of rows each (ForRowChunks;
// one goroutine below SerialRowCells cells). The result does not depend on
// threads: each row is reduced on its own, in column order. It takes
// O(len(Sources) · Width()) time.
func ComputeStatsThreads(b *Block, threads int) *Stats {
	s := NewStats(b.Sources, b.Type)
	switch b.Type {
	case DistInt32:
		reduceRows[int32](s, b, threads)
	case DistInt64:
		reduceRows[int64](s, b, threads)
	case DistFloat32:
		reduceRows[float32](s, b, threads)
	case DistFloat64:
		reduceRows[float64](s, b, threads)
	}
	return s
}

// reduceRows reduces the rows of b into s, each row's stats written only
// by the goroutine that reduces it.
func reduceRows[D Number](s *Stats, b *Block, threads int) {
	ForRowChunks(len(b.Sources), b.Width(), threads, func(first, end int) {
		for i := first; i < end; i++ {
			reduceRow(s, i, Row[D](b, i), b.Targets, b.NumVertices)
		}
	})
}

func reduceRow[D Number](s *Stats, i int, row []D, targets []VertexID, n int) {
	inf := Infinity[D]()
	src := s.Sources[i]
	if targets != nil {
		// n − 1 becomes the number of targets other than the source.
		n = len(targets) + 1
		for _, t := range targets {
			if t == src {
				n--
			}
		}
	}
	var reach int64
	var ecc D
	var sumInt int64
	var sumFloat, harmonic float64
	isFloat := s.Type.IsFloat()
	for v, d := range row {
		vertex := VertexID(v)
		if targets != nil {
			vertex = targets[v]
		}
		if d == inf || vertex == src {
			continue
		}
		if reach == 0 || d > ecc {
			ecc = d
		}
		reach++
		if isFloat {
			sumFloat += float64(d)
		} else {
			sumInt += int64(d)
		}
		if d != 0 {
			harmonic += 1 / float64(d)
		}
	}
	s.Reachable[i] = reach
	s.Eccentricity[i] = float64(ecc)
	s.Harmonic[i] = harmonic
	total := sumFloat
	if isFloat {
		s.SumFloat[i] = sumFloat
	} else {
		s.SumInt[i] = sumInt
		total = float64(sumInt)
	}
	if reach > 0 && total > 0 && n > 1 {
		s.Closeness[i] = (float64(reach) / total) * (float64(reach) / float64(n-1))
	}
}
