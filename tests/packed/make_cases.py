#!/usr/bin/python3
"""make_cases.py - the packed-type move cases of tests/packed, written as raw
protobuf (no onnx package needed): Transpose of uint4 and int2, Identity of
float4e2m1, Reshape of int4, odd element counts; each output packed here
apart from the compiler.  The generated case folders are committed."""
import struct, os, sys
def vint(n):
    out=b''
    while True:
        b=n&0x7f; n>>=7
        if n: out+=bytes([b|0x80])
        else: return out+bytes([b])
def f_v(f,n): return vint(f<<3)+vint(n)
def f_b(f,b):
    if isinstance(b,str): b=b.encode()
    return vint((f<<3)|2)+vint(len(b))+b
def tensor(name, dt, dims, raw):
    return b''.join(f_v(1,d) for d in dims)+f_v(2,dt)+f_b(8,name)+f_b(9,raw)
def vinfo(name, dt, dims):
    shape=b''.join(f_b(1,f_v(1,d)) for d in dims)
    return f_b(1,name)+f_b(2,f_b(1,f_v(1,dt)+f_b(2,shape)))
def attr_ints(name, vals):
    return f_b(1,name)+b''.join(f_v(8,v) for v in vals)+f_v(20,7)
def pack(vals, w):
    per=8//w; out=bytearray((len(vals)+per-1)//per)
    for i,v in enumerate(vals): out[i//per] |= (v & ((1<<w)-1)) << (i%per*w)
    return bytes(out)
def case(d, op, dt, w, indims, outdims, vals, outvals, attrs=b'', extra_inits=b'', extra_in=[]):
    os.makedirs(d+'/test_data_set_0', exist_ok=True)
    node=f_b(1,'x')+b''.join(f_b(1,e) for e in extra_in)+f_b(2,'y')+f_b(3,'n')+f_b(4,op)+attrs
    g=f_b(1,node)+f_b(2,'g')+extra_inits+f_b(11,vinfo('x',dt,indims))+f_b(12,vinfo('y',dt,outdims))
    m=f_v(1,10)+f_b(7,g)+f_b(8,f_b(1,'')+f_v(2,25))
    open(d+'/model.onnx','wb').write(m)
    open(d+'/test_data_set_0/input_0.pb','wb').write(tensor('x',dt,indims,pack(vals,w)))
    open(d+'/test_data_set_0/output_0.pb','wb').write(tensor('y',dt,outdims,pack(outvals,w)))
R=os.path.dirname(os.path.abspath(__file__)) + '/'
x=[(i*5+3)%16 for i in range(15)]  # 3x5 uint4
xt=[x[r*5+c] for c in range(5) for r in range(3)]
case(R+'transpose_u4', 'Transpose', 21, 4, [3,5], [5,3], x, xt, attrs=f_b(5,attr_ints('perm',[1,0])))
x2=[(i*3+1)%4 for i in range(15)]
xt2=[x2[r*5+c] for c in range(5) for r in range(3)]
case(R+'transpose_i2', 'Transpose', 26, 2, [3,5], [5,3], x2, xt2, attrs=f_b(5,attr_ints('perm',[1,0])))
case(R+'identity_f4', 'Identity', 23, 4, [7], [7], list(range(7)), list(range(7)))
shape=f_b(5, b''.join([f_v(1,2), f_v(2,7), f_b(8,'s'), f_b(9, struct.pack('<2q',5,3))]))
case(R+'reshape_i4', 'Reshape', 22, 4, [3,5], [5,3], x, x, extra_inits=shape, extra_in=['s'])
