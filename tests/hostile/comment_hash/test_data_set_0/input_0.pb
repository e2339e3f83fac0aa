B(*/
#error name broke out of a comment
/*Jb”>L1#¿0¿’Ž?ŒÔA¿Y;°¿