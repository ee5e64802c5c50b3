Bej
locationw.binp