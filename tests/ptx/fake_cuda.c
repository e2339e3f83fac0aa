/*
 * fake_cuda.c - a stand-in libcuda.so.1 for tests on machines without a
 * GPU (ctest cuda_autotune): the driver API calls burncc makes, on host
 * memory.  Modules keep their PTX text; a function counts its entry's
 * .param lines and a launch checks that each argument pointer is there
 * (kernels do not run: outputs stay as the copies left them).  An
 * event pair "measures" the last launch: a microsecond per block of its
 * grid, so a schedule with fewer, larger blocks is "faster": what lets a
 * test predict the autotuner's choice.  FAKE_LOG=1 prints each launch.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef uint64_t P;
typedef struct F { int np; char name[128]; } F;
int cuInit(unsigned f){return 0;}
int cuDriverGetVersion(int*v){*v=13000;return 0;}
int cuDeviceGetCount(int*n){*n=1;return 0;}
int cuDeviceGet(int*d,int o){*d=0;return 0;}
int cuDeviceGetAttribute(int*v,int a,int d){*v= a==16?132: a==75?9: a==76?0: 1024; if(a==97||a==8) *v=232448; return 0;}
int cuDeviceGetName(char*n,int len,int d){strncpy(n,"fake",len);return 0;}
int cuDevicePrimaryCtxRetain(void**c,int d){*c=(void*)1;return 0;}
int cuDevicePrimaryCtxReset_v2(int d){return 0;}
int cuCtxSetCurrent(void*c){return 0;}
int cuCtxSynchronize(void){return 0;}
int cuEventCreate(void**e,unsigned f){*e=malloc(8);return 0;}
int cuEventDestroy_v2(void*e){free(e);return 0;}
/* the time of the last launch: its blocks, a microsecond each */
static unsigned last_grid = 1;
int cuEventElapsedTime(float*ms,void*a,void*b){*ms=0.001f*(float)last_grid;return 0;}
int cuEventRecord(void*e,void*s){return 0;}
int cuEventSynchronize(void*e){return 0;}
int cuFuncSetAttribute(void*f,int a,int v){return 0;}
int cuGetErrorName(int e,const char**s){*s="CUDA_FAKE";return 0;}
int cuGetErrorString(int e,const char**s){*s="fake";return 0;}
int cuGraphDestroy(void*g){return 0;}
int cuGraphExecDestroy(void*g){return 0;}
int cuGraphInstantiateWithFlags(void**e,void*g,unsigned long long f){*e=(void*)1;return 0;}
int cuGraphLaunch(void*e,void*s){return 0;}
volatile unsigned long long sink;
int cuLaunchKernel(void*f,unsigned gx,unsigned gy,unsigned gz,unsigned bx,unsigned by,unsigned bz,unsigned sh,void*s,void**p,void**x){
  F*fx=f; last_grid=gx; for(int i=0;i<fx->np;i++){ if(!p[i]) {fprintf(stderr,"FAKE: %s param %d NULL\n",fx->name,i); continue;} sink+=*(unsigned char*)p[i]; }
  if(getenv("FAKE_LOG"))
    fprintf(stderr,"FAKE launch %s np=%d grid=%ux%u block=%u\n",fx->name,fx->np,gx,gy,bx);
  return 0;}
int cuMemAlloc_v2(P*p,size_t n){*p=(P)calloc(1,n?n:1);return 0;}
int cuMemFree_v2(P p){free((void*)p);return 0;}
int cuMemcpyDtoD_v2(P d,P s,size_t n){memmove((void*)d,(void*)s,n);return 0;}
int cuMemcpyDtoH_v2(void*d,P s,size_t n){memcpy(d,(void*)s,n);return 0;}
int cuMemcpyHtoD_v2(P d,const void*s,size_t n){memcpy((void*)d,s,n);return 0;}
int cuMemsetD8Async(P d,unsigned char v,size_t n,void*s){memset((void*)d,v,n);return 0;}
int cuMemsetD8_v2(P d,unsigned char v,size_t n){memset((void*)d,v,n);return 0;}
int cuModuleGetFunction(void**f,void*m,const char*n){
  F*x=calloc(1,sizeof*x); snprintf(x->name,128,"%s",n);
  const char*ptx=(const char*)m; char pat[200]; snprintf(pat,200,".entry %s(",n);
  const char*e=strstr(ptx,pat); if(!e){fprintf(stderr,"FAKE: no entry %s\n",n); return 500;}
  const char*end=strchr(e,')'); for(const char*q=e;q<end;q++) if(!strncmp(q,".param",6)) x->np++;
  *f=x; return 0;}
int cuModuleLoadDataEx(void**m,const void*img,unsigned n,void*o,void**ov){*m=strdup((const char*)img);return 0;}
int cuModuleUnload(void*m){return 0;}
int cuStreamBeginCapture_v2(void*s,int mode){return 0;}
int cuStreamCreate(void**s,unsigned f){*s=(void*)1;return 0;}
int cuStreamEndCapture(void*s,void**g){*g=(void*)1;return 0;}
int cuMemcpyHtoDAsync_v2(P d,const void*s,size_t n,void*st){memcpy((void*)d,s,n);return 0;}
int cuMemcpyDtoHAsync_v2(void*d,P s,size_t n,void*st){memcpy(d,(void*)s,n);return 0;}
int cuStreamDestroy_v2(void*s){return 0;}
int cuMemHostAlloc(void**p,size_t n,unsigned f){*p=malloc(n);return *p?0:2;}
int cuMemFreeHost(void*p){free(p);return 0;}
