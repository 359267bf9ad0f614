// Package benchmarks measures heat on the machine it runs on: the kernel's
// speed against the memory-bandwidth ceiling (a roofline point per grid
// size, thread count and temporal-blocking depth), strong and weak scaling
// studies that run heat once per resource point and repetition and turn the
// run reports into tables, plots and an α–β performance model, and the
// ping-pong that measures the transport's latency and bandwidth. `heat
// bench` drives it.
package benchmarks
