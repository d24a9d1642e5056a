package arrowio

// Id lists: the files of --sources-file and --targets-file, one id a line.
// Ids are kept verbatim, as every edge reader keeps string ids: a line's
// spaces are part of its id and an empty line is the id "", so that any
// vertex of a Parquet or CSV graph can be named.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// ReadIDList reads one id per line from r, exactly as written: only the
// line ending ("\n" or "\r\n") is removed. The final newline ends the last
// line (it adds no empty id); an empty line is the id "". A line may be as
// long as a line of a CSV edge table (1 MiB); a longer one is refused,
// naming its line number (1-based), after reading at most that much of it.
// An empty r gives no ids and no error: whether a list may be empty is the
// caller's to say.
func ReadIDList(r io.Reader) ([]string, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var ids []string
	var line []byte
	for n := 1; ; n++ {
		line = line[:0]
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			line = append(line, chunk...)
			// A line at the limit may still carry its "\r\n".
			if len(line) > maxTextLine+len("\r\n") {
				return nil, &idLineTooLongError{line: n}
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("arrowio: %w", err)
		}
		if len(line) == 0 { // at the end, after the final newline or in an empty file
			return ids, nil
		}
		id := line
		if rest, ok := bytes.CutSuffix(id, []byte("\n")); ok {
			id, _ = bytes.CutSuffix(rest, []byte("\r"))
		}
		if len(id) > maxTextLine {
			return nil, &idLineTooLongError{line: n}
		}
		ids = append(ids, string(id))
		if err != nil { // io.EOF: a last line without a newline
			return ids, nil
		}
	}
}

// idLineTooLongError reports a line of an id list over maxTextLine.
type idLineTooLongError struct{ line int }

func (e *idLineTooLongError) Error() string {
	return fmt.Sprintf("arrowio: line %d is longer than %d bytes (1 MiB), the limit of a line of an id list", e.line, maxTextLine)
}
