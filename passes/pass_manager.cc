// placeholder until the pass manager lands
