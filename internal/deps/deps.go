// Package deps pins the modules the packages under construction import, so
// that parallel work shares one go.sum. It is removed once they all import
// what they need.
package deps

import (
	_ "github.com/apache/arrow-go/v18/arrow"
	_ "github.com/apache/arrow-go/v18/arrow/array"
	_ "github.com/apache/arrow-go/v18/arrow/compute"
	_ "github.com/apache/arrow-go/v18/arrow/csv"
	_ "github.com/apache/arrow-go/v18/arrow/flight"
	_ "github.com/apache/arrow-go/v18/arrow/ipc"
	_ "github.com/apache/arrow-go/v18/arrow/memory"
	_ "github.com/apache/arrow-go/v18/parquet"
	_ "github.com/apache/arrow-go/v18/parquet/compress"
	_ "github.com/apache/arrow-go/v18/parquet/file"
	_ "github.com/apache/arrow-go/v18/parquet/pqarrow"
	_ "github.com/ebitengine/purego"
	_ "github.com/klauspost/compress/gzip"
	_ "github.com/klauspost/compress/zstd"
	_ "github.com/schollz/progressbar/v3"
	_ "github.com/urfave/cli/v2"
	_ "golang.org/x/term"
	_ "google.golang.org/grpc"
)
