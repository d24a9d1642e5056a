package main

// pathctl run --dry-run --json: the plan of a dry run as one JSON object
// on stdout, for programs (the Python package's dry_run=True) rather than
// people. The fields carry what printDryRun's lines say, as numbers where
// the lines round them.

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/pipeline"
)

// dryRunJSONFlag is --json.
func dryRunJSONFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "with --dry-run, print the plan as one JSON object (vertices, arcs, sources, targets, layout, rows, output_bytes, engine, algorithm ...)"}
}

// dryRunPlan is the JSON object of a dry run.
type dryRunPlan struct {
	Vertices int    `json:"vertices"`
	Arcs     int64  `json:"arcs"`
	Sources  int    `json:"sources"`
	Targets  int    `json:"targets"`
	Layout   string `json:"layout"`
	// Rows is exact where RowsExact, else the bound of every pair
	// reachable (unreachable pairs are left out of pairs).
	Rows      int64  `json:"rows"`
	RowsExact bool   `json:"rows_exact"`
	DistType  string `json:"dist_type"`
	// OutputBytes is the estimate for the destination's format; ArrowBytes
	// and CSVBytes those of Arrow IPC and CSV.
	OutputBytes int64  `json:"output_bytes"`
	ArrowBytes  int64  `json:"arrow_bytes"`
	CSVBytes    int64  `json:"csv_bytes"`
	Destination string `json:"destination"`
	// FreeBytes is the free space where the output goes (null where it
	// goes to no file system, or cannot be read); Refused says the run
	// would be refused for it without --force.
	FreeBytes *int64 `json:"free_bytes"`
	Refused   bool   `json:"refused_without_force"`
	// Engine is the engine's name; EngineReason why it was chosen.
	Engine       string `json:"engine"`
	EngineReason string `json:"engine_reason"`
	Algorithm    string `json:"algorithm"`
	// Seconds is a rough time where a past figure allows one: none yet.
	Seconds *float64 `json:"seconds"`
}

// printDryRunJSON writes the plan printDryRun prints as one JSON object.
func printDryRunJSON(w io.Writer, g *pipeline.Graph, est pipeline.Estimate, engine, algo, out, format string, free func(string) (int64, error)) error {
	p := dryRunPlan{
		Vertices: est.Vertices, Arcs: g.CSR.NumEdges(), Sources: est.Sources, Targets: est.Targets,
		Layout: string(est.Layout), Rows: est.Rows, RowsExact: est.Exact, DistType: est.DistType.String(),
		OutputBytes: outputBytes(est, out, format), ArrowBytes: est.Bytes, CSVBytes: est.CSVBytes,
		Destination: out, Algorithm: algo,
	}
	if out == "-" {
		p.Destination = "stdout"
	}
	p.Engine, p.EngineReason, _ = strings.Cut(engine, " ")
	p.EngineReason = strings.TrimSuffix(strings.TrimPrefix(p.EngineReason, "("), ")")
	if dir := spaceDir(out); dir != "" {
		if avail, err := free(dir); err == nil {
			p.FreeBytes = &avail
			p.Refused = p.OutputBytes > avail
		}
	}
	enc := json.NewEncoder(w)
	return enc.Encode(p)
}
