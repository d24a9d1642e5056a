package flight

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/pathctl/pathctl/graph"
	"github.com/pathctl/pathctl/pipeline"
)

// toStatus turns an error of the pipeline or of the server into a gRPC
// status: the code says what kind of failure it is, the message is the
// error's own (which names the graph, the vertex, the option).
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(interface{ GRPCStatus() *status.Status }); ok {
		return err
	}
	code := codes.Internal
	switch {
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	case errors.Is(err, graph.ErrNegativeWeight), errors.Is(err, graph.ErrNegativeCycle):
		code = codes.FailedPrecondition
	case errors.Is(err, pipeline.ErrUnavailable):
		code = codes.FailedPrecondition
	case errors.Is(err, pipeline.ErrInvalid):
		code = codes.InvalidArgument
		// The ticket's key, where the pipeline's words name only the value.
		switch {
		case errors.Is(err, pipeline.ErrUnknownTarget):
			return status.Error(code, `flight: "targets": `+err.Error())
		case errors.Is(err, pipeline.ErrPathsTooLarge):
			return status.Error(code, `flight: "with_paths": `+err.Error())
		}
	}
	return status.Error(code, err.Error())
}

func invalid(err error) error { return status.Error(codes.InvalidArgument, err.Error()) }
