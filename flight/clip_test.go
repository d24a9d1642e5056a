package flight

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestClipMessage(t *testing.T) {
	long := strings.Repeat("x", 100000)
	cases := []struct{ in, want string }{
		{`flight: graph "g": source "7": no such vertex`, `flight: graph "g": source "7": no such vertex`},
		{fmt.Sprintf(`flight: graph "g": source %q: no such vertex`, long),
			`flight: graph "g": source "` + strings.Repeat("x", 100) + `…" (100000 bytes): no such vertex`},
		{fmt.Sprintf(`unknown algorithm %q (want "auto")`, "a\"b"+long),
			`unknown algorithm "a\"b` + strings.Repeat("x", 96) + `…" (100004 bytes) (want "auto")`},
		{`an "unterminated ` + long, `an "unterminated ` + strings.Repeat("x", 87) + `…" (100013 bytes)`},
	}
	for _, c := range cases {
		if got := clipMessage(c.in); got != c.want {
			t.Errorf("clipMessage(%.60q…)\n got %.300q\nwant %.300q", c.in, got, c.want)
		}
	}
	// Unquoted, the whole is cut.
	got := clipMessage("flight: " + long)
	if len(got) > maxMessageBytes+64 || !strings.HasPrefix(got, "flight: xxx") || !strings.HasSuffix(got, "(a message of 100008 bytes, cut)") {
		t.Errorf("unquoted: %d bytes, ends %q", len(got), got[len(got)-40:])
	}
	err := clipStatus(status.Error(codes.InvalidArgument, fmt.Sprintf("source %q", long)))
	if st := status.Convert(err); st.Code() != codes.InvalidArgument || len(st.Message()) > 300 {
		t.Errorf("clipStatus: %v, %d bytes", st.Code(), len(st.Message()))
	}
}
