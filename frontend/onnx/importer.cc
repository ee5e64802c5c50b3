// placeholder until the importer lands
