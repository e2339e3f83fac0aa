Boutputs_dims_0J±‹)?åež¾ˆ²
>¨]A¿<i•=»
A?