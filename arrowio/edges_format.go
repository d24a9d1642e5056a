package arrowio

// EdgeOutputFormat returns the format WriteEdges would write path in under
// opt ("arrow", "arrows", "parquet", "csv", "tsv" or "gr"), or the error it
// would fail with for an unknown extension, format or compression, before
// anything is computed or written.
func EdgeOutputFormat(path string, opt WriteOptions) (string, error) {
	format, err := opt.outputFormat(path, true)
	if err != nil {
		return "", err
	}
	if path == "-" && opt.Format == "" {
		format = outArrows
	}
	if _, err := opt.compression(path, format); err != nil {
		return "", err
	}
	return format, nil
}
