package gen_test

import (
	"fmt"

	"github.com/pathctl/pathctl/gen"
)

func ExampleRMAT() {
	edges, err := gen.RMAT(10, 16, 42)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(edges.NumVertices, edges.Len(), len(edges.Weights))
	// Output: 1024 16384 16384
}

func ExampleGrid() {
	// A 3×4 grid has 3·3 horizontal and 2·4 vertical edges, each as two arcs.
	edges, err := gen.Grid(3, 4, 1, gen.WithFloatWeights(1, 2))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(edges.NumVertices, edges.Len(), edges.Src[0], edges.Dst[0], edges.Src[1], edges.Dst[1])
	// Output: 12 34 0 1 1 0
}

func ExampleUniform() {
	_, err := gen.Uniform(1, 4, 1)
	fmt.Println(err)
	// Output: gen: uniform graph needs 2 vertices or more for arcs without self-loops, got 1
}
