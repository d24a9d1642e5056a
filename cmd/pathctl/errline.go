package main

import (
	"errors"
	"os"
	"regexp"
	"strings"
)

// errorLine is err as the one line Main prints after "pathctl: ": what a
// user can act on, without the names of the packages that wrapped it on
// the way up. The library errors keep their prefixes ("arrowio: ...", as
// style.md asks); this is the one place that turns them into user lines:
//
//  1. an open failure names the file and the reason, not the system call
//     ("x.parquet: no such file or directory", not "open x.parquet: ...");
//  2. the package prefixes and the pipeline's "invalid request: " go,
//     wherever they sit in the chain;
//  3. an unknown source or target is one sentence naming the value once:
//     `--sources: "Q" is not a vertex of the graph`, where the pipeline
//     says `source "Q": vertex "Q" is not in the graph` (or, for an id
//     that does not parse as the graph's ids, "is not a valid int64 id":
//     `"Q" is not a vertex of the graph, whose ids are int64`).
//
// The exit status is exitCode's, from the error itself, not from this text.
func errorLine(err error) string {
	msg := oneLine(err.Error())
	// 1. The innermost *os.PathError of an open says "open NAME: reason".
	var pe *os.PathError
	if errors.As(err, &pe) && pe.Op == "open" {
		msg = strings.Replace(msg, "open "+pe.Path+": ", pe.Path+": ", 1)
	}
	// 2. Repeat: "arrowio: arrowio: " and "invalid request: arrowio: " nest.
	for {
		stripped := packagePrefix.ReplaceAllString(msg, "$1")
		if stripped == msg {
			break
		}
		msg = stripped
	}
	// 3. The id once, after the flag that gave it where the CLI named one.
	return unknownVertex.ReplaceAllStringFunc(msg, func(m string) string {
		p := unknownVertex.FindStringSubmatch(m)
		role, id, again, rest := p[1], p[2], p[3], p[4]
		if id != again {
			return m
		}
		switch {
		case rest == "in the graph":
			rest = "a vertex of the graph"
		case strings.HasSuffix(rest, " id"):
			// "a valid int64 id": the id does not parse as the graph's ids do.
			typ := strings.TrimSuffix(rest[strings.LastIndex(strings.TrimSuffix(rest, " id"), " ")+1:], " id")
			rest = "a vertex of the graph, whose ids are " + typ
		}
		line := id + " is not " + rest
		if !strings.HasPrefix(msg, "--") {
			// No flag names the role: sssp's and path's source, a
			// Flight ticket's target.
			line = strings.TrimPrefix(role, "unknown ") + " " + line
		}
		return line
	})
}

// packagePrefix is a package's prefix (or the pipeline's ErrInvalid text)
// at the start of the line or after another segment's ": ".
var packagePrefix = regexp.MustCompile(`(^|: )(?:arrowio|pipeline|graph|cpu|gpu|devices|flight|gen|hierarchy|bench|invalid request): `)

// unknownVertex is the pipeline's error of an id that is not a vertex
// (pipeline.ErrUnknownSource and ErrUnknownTarget: the role, the quoted
// id, then the lookup's error naming the id again) once the prefixes are
// gone: the role, the id, the id again, and what it is not.
var unknownVertex = regexp.MustCompile(`(source|unknown target) ("(?:[^"\\]|\\.)*"): vertex ("(?:[^"\\]|\\.)*") is not ((?:in the graph|a valid [a-z0-9]+ id|an? [a-z0-9]+ id))`)
