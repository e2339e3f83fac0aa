B
hm_outputsJZæQ¾ÀÑœ¿QT><nÛ>0Tì¾bÑ?