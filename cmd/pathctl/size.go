package main

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// byteUnits are the units a size flag takes: decimal (kB, MB, GB, TB) and
// binary (KiB, MiB, GiB, TiB), case-insensitive, and B.
var byteUnits = map[string]float64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

// parseBytes reads a size flag: plain bytes ("1073741824") or a number
// with a unit ("1GiB", "8GB", "1.5 GiB"). It refuses negative, fractional
// byte counts and sizes past int64.
func parseBytes(flag, s string) (int64, error) {
	text := strings.TrimSpace(s)
	i := strings.IndexFunc(text, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != '-' && r != '+' })
	num, unit := text, ""
	if i >= 0 {
		num, unit = strings.TrimSpace(text[:i]), strings.ToLower(strings.TrimSpace(text[i:]))
	}
	scale, ok := byteUnits[unit]
	if !ok || num == "" {
		return 0, usagef("--%s %q: want bytes, or a number with a unit: B, kB, MB, GB, TB, KiB, MiB, GiB or TiB (1GiB, 8GB)", flag, s)
	}
	if n, err := strconv.ParseInt(num, 10, 64); err == nil && scale == 1 {
		if n < 0 {
			return 0, usagef("--%s %q: a size cannot be negative", flag, s)
		}
		return n, nil
	}
	x, err := strconv.ParseFloat(num, 64)
	switch {
	case err != nil || math.IsNaN(x) || math.IsInf(x, 0):
		return 0, usagef("--%s %q: want bytes, or a number with a unit (1GiB, 8GB)", flag, s)
	case x < 0:
		return 0, usagef("--%s %q: a size cannot be negative", flag, s)
	case x*scale >= math.MaxInt64:
		return 0, usagef("--%s %q: too large", flag, s)
	case x*scale != math.Trunc(x*scale):
		return 0, usagef("--%s %q: not a whole number of bytes", flag, s)
	}
	return int64(x * scale), nil
}

// checkOutputDir refuses an output path whose directory is missing or not
// a directory, naming the directory rather than the temporary file the
// write would have opened. "-" (stdout) and "" pass.
func checkOutputDir(flag, path string) error {
	if path == "" || path == "-" {
		return nil
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return usagef("%s %s: directory %s does not exist", flag, path, dir)
	case err != nil:
		return usagef("%s %s: %v", flag, path, err)
	case !st.IsDir():
		return usagef("%s %s: %s is not a directory", flag, path, dir)
	}
	return nil
}
