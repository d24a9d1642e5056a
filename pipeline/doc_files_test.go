package pipeline

import (
	"testing"

	"github.com/pathctl/pathctl/internal/docfiles"
)

// TestDocNamesEveryFile: doc.go lists every file of the package, one line
// each, and no file that is gone.
func TestDocNamesEveryFile(t *testing.T) {
	if err := docfiles.Check("."); err != nil {
		t.Error(err)
	}
}
