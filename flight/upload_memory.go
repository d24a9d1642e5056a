package flight

// An upload's share of the server's memory budget (--max-memory): what
// its decoded bytes and rows reserve as they arrive, and what a client's
// declared size reserves ahead of them.

import (
	"context"
	"math"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/pathctl/pathctl/gen"
)

// account adds n decoded bytes, failing the upload past the limit, and
// reserves their memory.
func (s *limitedPutStream) account(n int64) error {
	if n > s.limit-s.decoded {
		return s.refuse(s.overLimit())
	}
	s.decoded += n
	return s.reserve()
}

// accountRows adds the rows of a batch read and reserves their memory.
func (s *limitedPutStream) accountRows(rows int64) error {
	s.rows += rows
	return s.reserve()
}

// reserve grows the upload's reservation to what its decoded bytes and
// rows so far take, waiting for the memory up to the idle timeout.
func (s *limitedPutStream) reserve() error {
	need := uploadDecodedFactor*s.decoded + uploadRowBytes*s.rows - s.reserved
	if need <= 0 || s.refused != nil {
		return s.refused
	}
	ctx, cancel := s.ctx, context.CancelFunc(func() {})
	if s.idle > 0 {
		ctx, cancel = context.WithTimeout(s.ctx, s.idle)
	}
	defer cancel()
	if err := s.budget.grow(ctx, s.reserved, need); err != nil {
		if st, ok := status.FromError(err); ok && st.Code() == codes.ResourceExhausted {
			err = status.Errorf(codes.ResourceExhausted,
				"flight: the upload reserves %d bytes per byte it decodes to and %d per row (%s and %d rows so far): %s",
				uploadDecodedFactor, uploadRowBytes, gen.HumanBytes(s.decoded), s.rows, strings.TrimPrefix(st.Message(), "flight: "))
		}
		return s.refuse(err)
	}
	s.reserved += need
	return nil
}

// reserveExpected reserves, before the upload's batches are read, the
// memory of the size its client said it has (UploadExpect): an upload
// that holds nothing yet waits for it as a query does, in turn, so that
// uploads that do not fit together run one after another. A size past
// --max-upload-bytes, or whose memory passes the whole budget, is refused
// at once.
func (s *limitedPutStream) reserveExpected(e *UploadExpect) error {
	if e == nil {
		return nil
	}
	if e.Bytes > s.limit {
		return s.refuse(status.Errorf(codes.ResourceExhausted,
			"flight: the upload says it holds %s, more than the server's limit of %s (--max-upload-bytes)",
			gen.HumanBytes(e.Bytes), gen.HumanBytes(s.limit)))
	}
	want := uploadDecodedFactor*min(e.Bytes, math.MaxInt64/(2*uploadDecodedFactor)) +
		uploadRowBytes*min(e.Rows, math.MaxInt64/(2*uploadRowBytes))
	if want <= s.reserved {
		return nil
	}
	var err error
	if s.reserved == 0 {
		err = s.budget.acquire(s.ctx, want)
	} else { // a batch read ahead holds memory already
		err = s.budget.grow(s.ctx, s.reserved, want-s.reserved)
	}
	if err != nil {
		if st, ok := status.FromError(err); ok && st.Code() == codes.ResourceExhausted {
			err = status.Errorf(codes.ResourceExhausted,
				"flight: the upload says it holds %d rows and %s, which reserve %s: %s",
				e.Rows, gen.HumanBytes(e.Bytes), gen.HumanBytes(want), strings.TrimPrefix(st.Message(), "flight: "))
		}
		return s.refuse(err)
	}
	s.reserved = want
	return nil
}
