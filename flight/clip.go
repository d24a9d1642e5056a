package flight

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc/status"
)

// Limits of what an error message echoes of a client's input. gRPC sends a
// status message in the trailers, whose size a client bounds (8 KiB by
// default in grpc-go, 16 KiB in others): a message that echoed a 100 KB id
// reached the client as "Received RST_STREAM" or "metadata size exceeds
// soft limit", its cause lost.
const (
	// maxEchoBytes is the longest quoted value a message keeps whole;
	// a longer one keeps its start and says how long it was.
	maxEchoBytes = 200
	// maxMessageBytes bounds a whole status message.
	maxMessageBytes = 2048
)

// clip is s for quoting in a message: s itself up to maxEchoBytes, else
// its start and its length.
func clip(s string) string {
	if len(s) <= maxEchoBytes {
		return s
	}
	return fmt.Sprintf("%s… (%d bytes)", cutRunes(s, maxEchoBytes/2), len(s))
}

// cutRunes is the longest prefix of s of at most n bytes that does not
// split a UTF-8 sequence.
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// clipStatus bounds the message of err's status: every quoted value
// longer than maxEchoBytes is cut to its start (the message still names
// what was wrong), and the whole to maxMessageBytes.
func clipStatus(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	msg := st.Message()
	if len(msg) <= maxEchoBytes {
		return err
	}
	clipped := clipMessage(msg)
	if clipped == msg {
		return err
	}
	return status.Error(st.Code(), clipped)
}

// clipMessage shortens the long double-quoted values of msg (as %q writes
// them, with \" inside) and then msg itself.
func clipMessage(msg string) string {
	var b strings.Builder
	for i := 0; i < len(msg); {
		q := strings.IndexByte(msg[i:], '"')
		if q < 0 {
			b.WriteString(msg[i:])
			break
		}
		b.WriteString(msg[i : i+q+1])
		start := i + q + 1
		end := start
		for end < len(msg) && msg[end] != '"' {
			if msg[end] == '\\' {
				end++
			}
			end++
		}
		end = min(end, len(msg))
		inner := msg[start:end]
		if len(inner) > maxEchoBytes {
			fmt.Fprintf(&b, "%s…\" (%d bytes)", cutRunes(inner, maxEchoBytes/2), len(inner))
			if end < len(msg) {
				end++ // the closing quote was written
			}
		} else {
			b.WriteString(inner)
		}
		i = end
		if i < len(msg) && msg[i] == '"' && len(inner) <= maxEchoBytes {
			b.WriteByte('"')
			i++
		}
	}
	out := b.String()
	if len(out) > maxMessageBytes {
		out = fmt.Sprintf("%s… (a message of %d bytes, cut)", cutRunes(out, maxMessageBytes), len(out))
	}
	return out
}
