package flight

import (
	"errors"
	"fmt"

	"github.com/pathctl/pathctl/pipeline"
)

// QueryNarrowing holds the ticket keys of queries narrower than all pairs
// (design.md, "Queries narrower than all pairs"), with the CLI's meaning:
// "targets" (--targets), "cutoff" (--cutoff), "k" (--k-nearest),
// "reverse" (--reverse) and "with_paths" (--with-paths). Query
// embeds it, so the keys sit beside the others in the ticket.
type QueryNarrowing struct {
	// Targets are external vertex ids, as JSON strings or numbers: the
	// only columns of the answer, in this order; absent means every vertex.
	Targets []SourceID `json:"targets,omitempty"`
	// Cutoff makes distances above it unreachable; absent means none.
	Cutoff *float64 `json:"cutoff,omitempty"`
	// K keeps per source the K nearest other vertices (pairs, with rank).
	K *int `json:"k,omitempty"`
	// Reverse gives distances to the sources along incoming arcs.
	Reverse bool `json:"reverse,omitempty"`
	// WithPaths adds the path column to pairs.
	WithPaths bool `json:"with_paths,omitempty"`
}

// check refuses values no graph could answer.
func (n QueryNarrowing) check() error {
	if n.Targets != nil && len(n.Targets) == 0 {
		return errors.New(`flight: "targets" is an empty list; leave it out for every vertex`)
	}
	if n.Cutoff != nil && !(*n.Cutoff >= 0) {
		return fmt.Errorf(`flight: "cutoff" %v: the cutoff is a distance of 0 or more`, *n.Cutoff)
	}
	if n.K != nil && *n.K <= 0 {
		return fmt.Errorf(`flight: "k" %d: k is 1 or more`, *n.K)
	}
	return nil
}

// apply puts the narrowing into opt.
func (n QueryNarrowing) apply(opt *pipeline.Options) {
	if n.Targets != nil {
		opt.Targets = make([]string, len(n.Targets))
		for i, t := range n.Targets {
			opt.Targets[i] = string(t)
		}
	}
	if n.Cutoff != nil {
		opt.Cutoff, opt.HasCutoff = *n.Cutoff, true
	}
	if n.K != nil {
		opt.K = *n.K
	}
	opt.Reverse, opt.WithPaths = n.Reverse, n.WithPaths
}
