package flight

import (
	"github.com/pathctl/pathctl/pipeline"
)

// queryRecordBytes bounds what a query's result records hold besides its
// blocks: a pairs record of up to 2^20 rows (two ids, a distance, a rank
// and a predecessor of 8 bytes each) or of up to 4 M path vertices
// (arrowio's caps), and the batch being sent.
const queryRecordBytes = 64 << 20

// queryHostBudget is the block budget of one query's run on a server of
// c on the host: the server's --mem where set, else the pipeline's default, lowered so
// that --max-concurrent runs at once fit half of --max-memory (the other
// half is for uploads and the records in flight).
func (c Config) queryHostBudget() int64 {
	if c.MemBudget > 0 {
		return c.MemBudget
	}
	b := int64(pipeline.DefaultMemBudget)
	if c.MaxMemory > 0 {
		b = min(b, c.MaxMemory/int64(2*max(c.MaxConcurrent, 1)))
	}
	return max(b, 1<<20)
}

// queryMemory is what a query reserves of the budget of a server of c
// (--max-memory) while it runs: its blocks, which the planner keeps under
// the host budget (Resources.MemBudget), or less for a small query (three
// blocks of its cells, distance and predecessor, in flight at most), and
// its records.
func (c Config) queryMemory(q *pipeline.Prepared) int64 {
	opt := q.Options()
	n := int64(q.Graph().NumVertices())
	sources := n
	if opt.Sources != nil {
		sources = int64(len(opt.Sources))
	}
	cell := int64(8)
	if opt.WithPredecessors || opt.WithPaths {
		cell += 4
	}
	blocks := c.queryHostBudget()
	if n > 0 && sources <= blocks/(3*n*cell) {
		blocks = 3 * sources * n * cell
	}
	records := min(int64(queryRecordBytes), 48*max(sources*n, 1))
	return blocks + records + 2*int64(c.MaxBatchBytes)
}
