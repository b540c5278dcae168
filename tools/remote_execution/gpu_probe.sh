#!/usr/bin/env bash
# Stands in for a test that needs a GPU: it needs none and passes anywhere.
# Its target declares exec_properties {"test.gpu": "cuda"}, which is what
# routes it on a cluster (gpu_routing_declared_not_detected_test.py).
echo "gpu_probe ran in ${PWD} on $(uname -n)"
