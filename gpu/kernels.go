package gpu

import (
	_ "embed"
	"strings"
)

// kernelImage is the fatbin that kernels/build.sh compiles from
// kernels/*.cu: SASS for sm_70 to sm_90 and compute_90 PTX.
//
//go:embed kernels/kernels.fatbin
var kernelImage []byte

// kernelHashFile is kernels/kernels.sha256: a comment line, then the hash of
// the kernel sources kernelImage was built from, as kernels/build.sh
// recorded it.
//
//go:embed kernels/kernels.sha256
var kernelHashFile string

// kernelSourceHash returns the hash line of kernelHashFile.
func kernelSourceHash() string {
	for _, line := range strings.Split(kernelHashFile, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			return line
		}
	}
	return ""
}

// fatbinMagic opens every fatbin (little-endian 0xBA55ED50).
var fatbinMagic = []byte{0x50, 0xed, 0x55, 0xba}
