package main

// The partitions of a -o DIR/ dataset (dataset.go): ranges of sources by
// default (source_block=00042/part-0.parquet), or with --partition-by
// source one partition per source (source=ID/part-0.parquet), for runs of
// few sources that readers filter by source.

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/pathctl/pathctl/arrowio"
)

const (
	partitionBySourceBlock = "source_block"
	partitionBySource      = "source"
	// maxSourcePartitions bounds --partition-by source: each source is a
	// directory, a file and an entry of the manifest, which is rewritten
	// after every block (a thousand sources write 65 MB of manifests;
	// many more belong in source blocks).
	maxSourcePartitions = 1000
	// maxPartitionName is the longest file name most file systems take.
	maxPartitionName = 255
	// hiveDefaultPartition is Hive's (and Spark's) directory name for a
	// partition value it cannot write: here the empty id.
	hiveDefaultPartition = "__HIVE_DEFAULT_PARTITION__"
)

// partitionFlag is --partition-by.
func partitionFlag() cli.Flag {
	return &cli.StringFlag{Name: "partition-by", Value: partitionBySourceBlock,
		Usage: fmt.Sprintf("-o DIR/: %s (ranges of --dataset-block sources) or %s (a partition source=ID per source, at most %d sources; the files keep their source column)",
			partitionBySourceBlock, partitionBySource, maxSourcePartitions)}
}

// checkPartitionBy checks --partition-by against the rest of the request
// and returns it.
func checkPartitionBy(c *cli.Context, layout arrowio.Layout) (string, error) {
	by := c.String("partition-by")
	switch by {
	case "", partitionBySourceBlock: // "": sssp and bfs, which have no flag
		by = partitionBySourceBlock
	case partitionBySource:
		if layout == arrowio.LayoutNearest || layout.IsBetweenness() {
			return "", usagef("--partition-by source: the %s layout is one answer over every source, not one per source", layout)
		}
		if c.IsSet("dataset-block") {
			return "", usagef("--partition-by source and --dataset-block: a partition per source holds one source; give one")
		}
	default:
		return "", usagef("--partition-by %q: want %s or %s", by, partitionBySourceBlock, partitionBySource)
	}
	return by, nil
}

// sourcePartitions is the partition directory of each source id in order
// (source=ID, the id escaped as Hive escapes strings), for --partition-by
// source; it refuses more than maxSourcePartitions sources and ids too
// long for a file name.
func sourcePartitions(ids []string) ([]string, error) {
	if len(ids) > maxSourcePartitions {
		return nil, usagef("--partition-by source: %d sources would be %d partitions, at most %d; give fewer --sources, or leave --partition-by at %s",
			len(ids), len(ids), maxSourcePartitions, partitionBySourceBlock)
	}
	dirs := make([]string, len(ids))
	for i, id := range ids {
		dirs[i] = partitionBySource + "=" + hiveEscape(id)
		if len(dirs[i]) > maxPartitionName {
			return nil, usagef("--partition-by source: source %.40q... is too long for a partition's directory name (%d bytes escaped, at most %d)",
				id, len(dirs[i]), maxPartitionName)
		}
	}
	return dirs, nil
}

// hiveEscape escapes s as a partition value the way Hive's
// FileUtils.escapePathName does, which Spark, DuckDB and pyarrow
// (segment_encoding "uri") decode: %XX, upper-case hex, for the control
// characters, DEL and "#%'*/:=?\{[]^; the bytes of invalid UTF-8 too.
// The empty value is Hive's default partition.
func hiveEscape(s string) string {
	if s == "" {
		return hiveDefaultPartition
	}
	valid := utf8.ValidString(s)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte(`"#%'*/:=?\{[]^`, c) >= 0 || (!valid && c >= 0x80) {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// datasetPartPath is the path, relative to DIR, of block b's file:
// under its source's partition (dirs, for --partition-by source), else
// under source_block=b, zero-padded to width digits.
func datasetPartPath(dirs []string, b, width int, ext string) string {
	if dirs != nil {
		return dirs[b] + "/part-0" + ext
	}
	return fmt.Sprintf("%s=%0*d/part-0%s", partitionBySourceBlock, width, b, ext)
}

// isPartitionDir reports whether a top-level name of DIR is a partition
// pathctl writes.
func isPartitionDir(name string) bool {
	return strings.HasPrefix(name, partitionBySourceBlock+"=") || strings.HasPrefix(name, partitionBySource+"=")
}
