"""The vulkan-graph row's IREE peer does the row's work: each add_one a
dispatch of its own (none fused away), run by IREE's runtime on its Vulkan
HAL (lavapipe here), the results read back right."""

import cases_iree


def test_the_program_has_one_dispatch_per_add_one():
    program = cases_iree.iree_program("/x.spv", dispatches=3)
    assert program.count("flow.dispatch @add_one::@main") == 3
    assert "-> %x2" in program and "return %x3" in program  # each updates the one before in place


def test_iree_runs_every_dispatch_on_its_vulkan_hal():
    main, x, read_back = cases_iree.iree_graph(3)  # compiled, run once, checked: x == 3
    main(x)
    assert (read_back() == 6.0).all()
