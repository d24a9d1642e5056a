package arrowio

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestRemoveTemporaries: the temporary file of a writer still open is
// removed, through a link to the output too; a file of another process,
// another output, and the output itself stay.
func TestRemoveTemporaries(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "link.arrow")
	if err := os.Symlink("out.arrow", link); err != nil {
		t.Fatal(err)
	}
	others := []string{".out.arrow.tmp-1-" + hostTag() + "-9", "." + "other.arrow.tmp-" + "x", "out.arrow.keep"}
	for _, name := range others {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rec := smallResultRecord(mem, []int64{1, 2}, []float64{0.5, 1.5})
	defer rec.Release()
	w, err := CreateResult(link, rec.Schema(), WriteOptions{Format: outArrow, Allocator: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	removed := RemoveTemporaries(link)
	if len(removed) != 1 || filepath.Dir(removed[0]) != dir {
		t.Fatalf("removed %q, want the one temporary file of out.arrow", removed)
	}
	left := append(others, "link.arrow")
	slices.Sort(left)
	dirHoldsOnly(t, dir, left...)
	if got := RemoveTemporaries("-"); got != nil {
		t.Errorf("RemoveTemporaries(-) = %q", got)
	}
}
