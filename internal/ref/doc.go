// Package ref holds the serial oracles that the engines are checked
// against: Dijkstra with a binary heap, Bellman-Ford, Floyd-Warshall and BFS,
// plus CheckPredecessors, which checks a predecessor array by its
// properties. They favour being obviously correct over being fast and are
// used only by tests and by `pathctl verify`.
//
// Every oracle is generic over the distance type D and computes in D's own
// arithmetic; unreachable vertices hold graph.Infinity[D](). Errors are
// prefixed "ref: ".
package ref
