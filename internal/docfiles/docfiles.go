// Package docfiles checks that a package's doc.go names every file of the
// package, one line each, so that a newcomer finds a file's job in one
// place. Used only by tests.
//
// The list is the doc comment's lines of the form
//
//	//   - NAME.go: what the file holds
//
// and it must name every non-test .go file of the directory, and no other.
package docfiles

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

var entry = regexp.MustCompile(`(?m)^//   - ([A-Za-z0-9_.]+\.go): \S`)

// Check returns an error naming the files of dir that its doc.go does not
// list and the listed files that dir does not hold; nil when they agree.
func Check(dir string) error {
	doc, err := os.ReadFile(filepath.Join(dir, "doc.go"))
	if err != nil {
		return fmt.Errorf("docfiles: %w", err)
	}
	listed := map[string]bool{}
	for _, m := range entry.FindAllSubmatch(doc, -1) {
		listed[string(m[1])] = true
	}
	if len(listed) == 0 {
		return fmt.Errorf("docfiles: %s lists no files (lines \"//   - NAME.go: ...\")", filepath.Join(dir, "doc.go"))
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return fmt.Errorf("docfiles: %w", err)
	}
	var missing []string
	for _, p := range names {
		name := filepath.Base(p)
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		if !listed[name] {
			missing = append(missing, name)
		}
		delete(listed, name)
	}
	var stale []string
	for name := range listed {
		stale = append(stale, name)
	}
	sort.Strings(stale)
	switch {
	case len(missing) > 0 && len(stale) > 0:
		return fmt.Errorf("docfiles: doc.go does not name %v and names %v, which are not there", missing, stale)
	case len(missing) > 0:
		return fmt.Errorf("docfiles: doc.go does not name %v: add a line each", missing)
	case len(stale) > 0:
		return fmt.Errorf("docfiles: doc.go names %v, which are not there", stale)
	}
	return nil
}
