package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pathctl/pathctl/flight"
)

// ticketKeys are the JSON keys of a Flight query ticket (flight.Query and
// the structs it embeds).
func ticketKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			keys = append(keys, ticketKeys(f.Type)...)
			continue
		}
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	return keys
}

// TestServeHelpNamesTicketKeys checks that serve --help and the Flight
// table of docs/serve.md name every key of a query ticket (targets, cutoff, k,
// reverse and with_paths were missing from both).
func TestServeHelpNamesTicketKeys(t *testing.T) {
	keys := ticketKeys(reflect.TypeOf(flight.Query{}))
	if len(keys) < 12 {
		t.Fatalf("ticket keys %v: flight.Query was not read", keys)
	}
	var help string
	for _, c := range App(&env{ctx: context.Background(), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}).Commands {
		if c.Name == "serve" {
			help = c.Description
		}
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "docs", "serve.md"))
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "| GetFlightInfo / DoGet") {
			row = line
		}
	}
	words := strings.FieldsFunc(help, func(r rune) bool { return !(r == '_' || r >= 'a' && r <= 'z') })
	for _, key := range keys {
		found := false
		for _, w := range words {
			found = found || w == key
		}
		if !found {
			t.Errorf("serve --help does not name the ticket key %q: %q", key, help)
		}
		if !strings.Contains(row, `"`+key+`"`) {
			t.Errorf("docs/serve.md's Flight table does not name the ticket key %q: %q", key, row)
		}
	}
}
