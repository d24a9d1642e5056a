package flight

import (
	"errors"
	"fmt"

	"github.com/pathctl/pathctl/arrowio"
	"github.com/pathctl/pathctl/pipeline"
)

// QueryBetweenness holds the ticket keys of the betweenness layout
// ("layout": "betweenness"), with networkx's meaning and the CLI's
// (pathctl run --layout betweenness): "normalized" (default true),
// "endpoints" (default false) and "seed", the seed of the sample of "k"
// sources. With this layout the ticket's "k" is the number of sampled
// sources (the CLI's --k and Python's k=), not the k nearest: the k
// nearest are a pairs query, which this layout is not, so one key serves
// both without ambiguity. Query embeds it.
type QueryBetweenness struct {
	// Normalized divides by the pairs a vertex may lie between; absent
	// means true.
	Normalized *bool `json:"normalized,omitempty"`
	// Endpoints counts the ends of every path as lying on it.
	Endpoints bool `json:"endpoints,omitempty"`
	// Seed draws the sample of "k" sources (pipeline.SampleSources);
	// absent means 0.
	Seed *uint64 `json:"seed,omitempty"`
}

// isBetweenness reports whether q asks for the betweenness layout.
func (q *Query) isBetweenness() bool {
	return arrowio.Layout(q.Layout).IsBetweenness()
}

// checkBetweenness refuses the betweenness keys with another layout, a
// seed without a sample, and a sample beside the sources, as the CLI does.
func (q *Query) checkBetweenness() error {
	b := q.QueryBetweenness
	if !q.isBetweenness() {
		for _, key := range []struct {
			name string
			set  bool
		}{{"normalized", b.Normalized != nil}, {"endpoints", b.Endpoints}, {"seed", b.Seed != nil}} {
			if key.set {
				return fmt.Errorf(`flight: %q is a key of "layout": "betweenness", not %q`, key.name, q.Layout)
			}
		}
		return nil
	}
	switch {
	case b.Seed != nil && q.K == nil:
		return errors.New(`flight: "seed" draws the sample of "k" sources; give "k" too`)
	case q.K != nil && q.Sources != nil:
		return errors.New(`flight: "k" samples the sources of the betweenness layout; give "k" or "sources", not both`)
	}
	return nil
}

// betweennessOptions are the pipeline's options of a betweenness query.
func (q *Query) betweennessOptions() pipeline.BetweennessOptions {
	b := q.QueryBetweenness
	bopt := pipeline.BetweennessOptions{Endpoints: b.Endpoints}
	bopt.Unnormalized = b.Normalized != nil && !*b.Normalized
	if q.K != nil {
		bopt.Sample = *q.K
	}
	if b.Seed != nil {
		bopt.Seed = *b.Seed
	}
	return bopt
}

// applyBetweenness puts the betweenness options into opt and takes "k"
// back out of it for the betweenness layout, where it is the sample
// (betweennessOptions), not the k nearest.
func (q *Query) applyBetweenness(opt *pipeline.Options) {
	if q.isBetweenness() {
		opt.K = 0
		opt.Betweenness = q.betweennessOptions()
	}
}
