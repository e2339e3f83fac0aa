B\\\
#error splicedJ–8±¿K›¿ßKƒ¿Yè¿j‹X¿ÍÇ?