package hierarchy

import (
	"bytes"
	"hash/crc64"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pathctl/pathctl/internal/testgraphs"
)

// The combination law of CRC-64 that the spans' checksums rely on, for
// random splits of random bytes.
func TestChecksumCombines(t *testing.T) {
	rng := testgraphs.Rand(t, 40)
	data := make([]byte, 20000)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for range 50 {
		cut := rng.IntN(len(data) + 1)
		a, b := data[:cut], data[cut:]
		zeros := crcZeros(int64(len(b)))
		if got, want := zeros.apply(crc64.Checksum(a, crcTable))^crc64.Checksum(b, crcTable), crc64.Checksum(data, crcTable); got != want {
			t.Fatalf("%d+%d bytes: combined %016x, whole %016x", len(a), len(b), got, want)
		}
	}
}

// An index read in spans of every size gives the hierarchy written, from a
// file, from a reader of known size and from a plain reader; a damaged byte
// anywhere is refused at any span size.
func TestIndexReadInSpans(t *testing.T) {
	rng := testgraphs.Rand(t, 43)
	g := mustBuildCSR(t, testgraphs.RoadGrid(rng, 12, 13, 0.3, 0.1, 40), false)
	h, err := Build(g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	data := indexBytes(t, h)
	for _, spanSize := range []int64{8, 16, 64, 1000, spanBytes} {
		got, err := decodeAt(bytes.NewReader(data), int64(len(data)), spanSize)
		if err != nil || !reflect.DeepEqual(got, h) {
			t.Fatalf("spans of %d bytes: %v, equal %v", spanSize, err, reflect.DeepEqual(got, h))
		}
		for range 20 {
			bad := bytes.Clone(data)
			bad[rng.IntN(len(bad))] ^= byte(1 + rng.IntN(255))
			if _, err := decodeAt(bytes.NewReader(bad), int64(len(bad)), spanSize); err == nil {
				t.Fatalf("spans of %d bytes: a damaged index was accepted", spanSize)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "g.ch")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pr, pw := io.Pipe()
	go func() {
		_, err := pw.Write(data)
		pw.CloseWithError(err)
	}()
	for name, r := range map[string]io.Reader{"file": f, "reader": bytes.NewReader(data), "pipe": pr} {
		got, err := Read(r, g)
		if err != nil || !reflect.DeepEqual(got, h) {
			t.Fatalf("%s: %v, equal %v", name, err, reflect.DeepEqual(got, h))
		}
	}
}
